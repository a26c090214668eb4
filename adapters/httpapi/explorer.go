package httpapi

import (
	"embed"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/swaggest/swgui/v5/static"
	"github.com/vearutop/statigz"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

//go:embed explorer/index.html explorer/explorer.js explorer/explorer.css
var explorerFiles embed.FS

const (
	explorerPath       = "/api/docs"
	explorerAssetsPath = explorerPath + "/assets/"
)

// addExplorer serves the interactive explorer: Swagger UI, embedded in the
// binary (no network access needed), listing the three contracts under a
// Gatehouse header (explorer.js replaces Swagger UI's logo; Swagger's icons
// are not served). Its page runs only scripts served from here, so its CSP
// needs no inline script.
func (s *Server) addExplorer() {
	index, err := explorerFiles.ReadFile("explorer/index.html")
	if err != nil {
		panic("httpapi: explorer page missing: " + err.Error())
	}
	swaggerUI := http.StripPrefix(explorerAssetsPath, statigz.FileServer(static.FS))
	ours := http.StripPrefix(explorerAssetsPath, http.FileServerFS(mustSub(explorerFiles, "explorer")))

	s.page(explorerPath, edge.Policy{Rate: edge.RatePublic}, func(c *gin.Context) {
		c.Header("Content-Security-Policy", explorerCSP)
		c.Header("Cache-Control", "no-cache")
		c.Data(http.StatusOK, "text/html; charset=utf-8", index)
	})
	s.handle(http.MethodGet, explorerAssetsPath+"*file", edge.Policy{Rate: edge.RatePublic}, func(c *gin.Context) {
		c.Header("Cache-Control", "no-cache")
		switch name := strings.TrimPrefix(c.Param("file"), "/"); name {
		case "explorer.js", "explorer.css":
			ours.ServeHTTP(c.Writer, c.Request)
		case "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css":
			swaggerUI.ServeHTTP(c.Writer, c.Request)
		default:
			s.notFound(c)
		}
	})
}
