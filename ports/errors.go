package ports

import (
	"fmt"

	"github.com/gatehouse/gatehouse/domain"
)

// ErrOutboxMessageExists is Append with a taken id: the store's error
// beside its message type (OutboxMessage, in this package). Every other
// store error lives in domain, beside its aggregate.
var ErrOutboxMessageExists = domain.NewError(domain.KindConflict, "outbox.exists", "an outbox message with this id already exists")

// UserQueryError reports a condition or sort of a UserQuery that a store
// does not support (domain.KindInvalid). The offending names go in the
// cause, which is logged and never sent.
func UserQueryError(format string, args ...any) error {
	return &domain.Error{Kind: domain.KindInvalid, Code: "user.query_unsupported",
		Message: "unsupported user query", Err: fmt.Errorf(format, args...)}
}
