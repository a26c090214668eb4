package edge

import "strings"

// The path prefixes of the two surfaces that own a whole subtree: the
// framework (Better Auth's base path, its issuer's path too) and the
// administration API. Routes are registered under them; only requests no
// route matches are told apart by them (Unmatched), a matched route's policy
// being the one it declared.
const (
	FrameworkBase = "/api/auth"
	AdminBase     = "/api/admin"
)

// ExplorerPath is where the explorer (explorer/) serves its page; the
// trusted API's protected-resource metadata (oidc/) names it.
const ExplorerPath = "/api/docs"

// Unmatched is the policy of a request on a path no route serves: under
// /api/auth Better Auth's (its unknown routes answer an empty 404, its
// preflights follow its CORS rule, and its state-changing requests are
// origin-checked); under /api/admin the administration API's (problems,
// origin-checked); elsewhere a problem. Every one is counted under
// RateUnmatched.
func Unmatched(path string) *Policy {
	switch {
	case path == FrameworkBase || strings.HasPrefix(path, FrameworkBase+"/"):
		return &unmatchedFramework
	case strings.HasPrefix(path, AdminBase+"/"):
		return &unmatchedAdmin
	}
	return &unmatchedOther
}

var (
	unmatchedFramework = Policy{Shape: ShapeFramework, Rate: RateUnmatched, Security: SecuritySession, CORS: CORSTrusted}
	unmatchedAdmin     = Policy{Shape: ShapeProblem, Rate: RateUnmatched, Security: SecuritySession}
	unmatchedOther     = Policy{Shape: ShapeProblem, Rate: RateUnmatched}
)
