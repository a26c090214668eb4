package harness

import (
	"net/http"
)

// head sends a HEAD request as the browser.
func (b *FormBrowser) Head(path string) *Response {
	b.t.Helper()
	req, err := http.NewRequestWithContext(b.t.Context(), http.MethodHead, b.app.URL+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.send(req)
}
