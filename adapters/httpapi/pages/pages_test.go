package pages

import "testing"

// Ensure only well-formed web origins and private-use schemes become CSP
// sources, so nothing a client registered can widen a page's policy further.
func TestCSPOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://rp.example.com":      "https://rp.example.com",
		"http://127.0.0.1:8080":       "http://127.0.0.1:8080",
		"HTTPS://RP.Example.com":      "https://rp.example.com",
		"com.example.app:":            "com.example.app:",
		"myapp:":                      "",
		"javascript:":                 "",
		"data:":                       "",
		"com.example.app;script-src:": "",
		"https://rp.example.com;x":    "",
		"https://user@rp.example.com": "",
		"ftp://rp.example.com":        "",
		"":                            "",
	} {
		if got := cspOrigin(in); got != want {
			t.Errorf("cspOrigin(%q) = %q, want %q", in, got, want)
		}
	}
}
