package usecase

import "github.com/gatehouse/gatehouse/domain"

// The refusals of a malformed page request, shared by every trusted listing.
var (
	errPageCursor = domain.Invalid("paging.invalid_cursor", "Invalid cursor",
		domain.FieldViolation{Field: "cursor", Message: "is not a cursor this listing returned"})
	errPageLimit = domain.Invalid("paging.invalid_limit", "Invalid limit",
		domain.FieldViolation{Field: "limit", Message: "must be 1 to 100"})
)

// MaxPageLimit is the largest page a trusted listing returns.
const MaxPageLimit = 100

// PageRequest checks a listing's limit (1 to MaxPageLimit) and decodes its
// cursor: nil for "" (the first page).
func PageRequest(limit int, cursor string) (*domain.Position, error) {
	if limit < 1 || limit > MaxPageLimit {
		return nil, errPageLimit
	}
	if cursor == "" {
		return nil, nil
	}
	p, ok := domain.ParseCursor(cursor)
	if !ok {
		return nil, errPageCursor
	}
	return &p, nil
}

// NextCursor encodes the position of the next page, "" on the last page.
func NextCursor(p *domain.Position) string {
	if p == nil {
		return ""
	}
	return p.Cursor()
}
