package account

import (
	"context"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// UpdateUser changes the signed-in user's profile. Nil fields are left alone.
type UpdateUser struct {
	UserID domain.UserID
	Name   *string
	Image  *string // "" clears the image
}

var errNoFieldsToUpdate = domain.Invalid("user.no_fields_to_update", "No fields to update")

// UpdateUser applies the changes (user.updated) and returns the updated user.
func (h *Profile) UpdateUser(ctx context.Context, cmd UpdateUser) (*domain.User, error) {
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
