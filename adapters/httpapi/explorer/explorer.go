// Package explorer serves the interactive API explorer: Swagger UI, embedded
// in the binary (no network access needed), listing the three contracts
// under a Gatehouse header (explorer.js replaces Swagger UI's logo; Swagger's
// icons are not served). Its page runs only scripts served from here, so its
// CSP needs no inline script.
package explorer

import (
	"embed"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/swaggest/swgui/v5/static"
	"github.com/vearutop/statigz"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

//go:embed index.html explorer.js explorer.css
var files embed.FS

// Path is the explorer's page.
const Path = edge.ExplorerPath

const assetsPath = Path + "/assets/"

// csp is the explorer page's content security policy: it runs only its own
// scripts.
const csp = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'"

// Routes serves the explorer's page and assets, public documents under the
// public rate rule.
func Routes(r edge.Router) {
	index, err := files.ReadFile("index.html")
	if err != nil {
		panic("explorer: page missing: " + err.Error())
	}
	swaggerUI := http.StripPrefix(assetsPath, statigz.FileServer(static.FS))
	ours := http.StripPrefix(assetsPath, http.FileServerFS(files))
	public := edge.Policy{Rate: edge.RatePublic}

	r.Page(Path, public, func(c *gin.Context) {
		c.Header("Content-Security-Policy", csp)
		c.Header("Cache-Control", "no-cache")
		c.Data(http.StatusOK, "text/html; charset=utf-8", index)
	})
	r.Handle(http.MethodGet, assetsPath+"*file", public, func(c *gin.Context) {
		c.Header("Cache-Control", "no-cache")
		switch name := strings.TrimPrefix(c.Param("file"), "/"); name {
		case "explorer.js", "explorer.css":
			ours.ServeHTTP(c.Writer, c.Request)
		case "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css":
			swaggerUI.ServeHTTP(c.Writer, c.Request)
		default:
			r.NotFound(c)
		}
	})
}
