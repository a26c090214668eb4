package shell

import (
	"net/http"
	"strings"
)

// CSP is every console and account page's policy: the shell's own
// stylesheet and scripts (and a section's own script), images from here
// (and data: for icons), forms that post here, and no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// SetHeaders sets the headers of every HTML answer of the surfaces: its
// policy csp, no caching, no referrer, no framing, no sniffing.
func SetHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
}

// withFormTargets is csp whose form-action also allows targets: origins a
// form's redirect may end at (browsers check form-action on a form post's
// redirects), such as an identity provider's authorization endpoint.
func withFormTargets(csp string, targets []string) string {
	if len(targets) == 0 {
		return csp
	}
	return strings.Replace(csp, "form-action 'self'", "form-action 'self' "+strings.Join(targets, " "), 1)
}
