// Package shell is what the HTML surfaces share: the admin console
// (console/), the account pages (account/) and, for its headers and
// assets, the hosted pages (pages/). It holds
//   - the security headers and the console's CSP (headers.go), and the
//     versioned, immutable assets (assets.go);
//   - the layout, one renderer and the refusal pages (render.go,
//     templates/, assets/);
//   - the session gate: who is signed in (edge.Kit.Principal), the
//     console's idle timeout, and the way back from signing in (gate.go);
//   - single-use form tokens and the form runner (forms.go);
//   - one way to finish a form: a redirect with a notice, the notices
//     declared beside a section's routes (finish.go);
//   - one binder of query and form input into typed structs (bind.go).
//
// A surface builds a Section on the Shell for each group of its routes and
// registers its pages and forms through it.
package shell
