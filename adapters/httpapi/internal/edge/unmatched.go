package edge

import "strings"

// The path prefixes of the two contracts that own a whole subtree. Only
// requests no route matches are told apart by them (Unmatched); a matched
// route's policy is the one it declared.
const (
	frameworkBase = "/api/auth"
	adminBase     = "/api/admin"
)

// Unmatched is the policy of a request on a path no route serves: under
// /api/auth Better Auth's (its unknown routes answer an empty 404, its
// preflights follow its CORS rule, and its state-changing requests are
// origin-checked); under /api/admin the administration API's (problems,
// origin-checked); elsewhere a problem. Every one is counted under
// RateUnmatched.
func Unmatched(path string) *Policy {
	switch {
	case path == frameworkBase || strings.HasPrefix(path, frameworkBase+"/"):
		return &unmatchedFramework
	case strings.HasPrefix(path, adminBase+"/"):
		return &unmatchedAdmin
	}
	return &unmatchedOther
}

var (
	unmatchedFramework = Policy{Shape: ShapeFramework, Rate: RateUnmatched, Security: SecuritySession, CORS: CORSTrusted}
	unmatchedAdmin     = Policy{Shape: ShapeProblem, Rate: RateUnmatched, Security: SecuritySession}
	unmatchedOther     = Policy{Shape: ShapeProblem, Rate: RateUnmatched}
)
