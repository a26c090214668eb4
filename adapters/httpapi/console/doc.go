// Package console serves the admin console under /console: server-rendered
// pages (html/template, templates/) for platform administrators, on the
// shell the account pages share (internal/shell: the layout, its
// stylesheet and script, strict response headers, single-use form tokens,
// the administrator's gate with its idle timeout). Like the hosted pages it
// is a surface, not a contract: no document lists its routes. Every action
// goes through the use cases the admin API (/api/admin, the framework's
// admin plugin) uses, so the same checks and audit entries apply; each
// section (users.go, organizations.go, …) is a type holding as fields only
// the use cases its handlers call (Deps, one struct per section, built in
// routes.go), on the base they share (api.go).
package console
