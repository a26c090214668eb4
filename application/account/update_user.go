package account

import (
	"context"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// UpdateUser changes the signed-in user's profile. Nil fields are left alone.
type UpdateUser struct {
	UserID domain.UserID
	Name   *string
	Image  *string // "" clears the image
}

// UpdateUserHandler handles UpdateUser.
type UpdateUserHandler struct {
	users  ports.UserRepository
	events *usecase.Events
	clock  ports.Clock
}

// NewUpdateUserHandler returns an UpdateUserHandler.
func NewUpdateUserHandler(users ports.UserRepository, events *usecase.Events, clock ports.Clock) *UpdateUserHandler {
	usecase.MustHave(users, clock)
	return &UpdateUserHandler{users: users, events: events, clock: clock}
}

var errNoFieldsToUpdate = domain.Invalid("user.no_fields_to_update", "No fields to update")

// Handle applies the changes (user.updated) and returns the updated user.
func (h *UpdateUserHandler) Handle(ctx context.Context, cmd UpdateUser) (*domain.User, error) {
	if cmd.Name == nil && cmd.Image == nil {
		return nil, errNoFieldsToUpdate
	}
	var out *domain.User
	err := h.events.Do(ctx, func(ctx context.Context, emit usecase.Emit) error {
		err := h.users.Update(ctx, cmd.UserID, func(u *domain.User) error {
			now := h.clock.Now()
			if cmd.Name != nil {
				if err := u.Rename(*cmd.Name, now); err != nil {
					return err
				}
			}
			if cmd.Image != nil {
				if err := u.SetImage(*cmd.Image, now); err != nil {
					return err
				}
			}
			out = u
			return nil
		})
		if err != nil {
			return err
		}
		emit(domain.EventUserUpdated, out)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
