package console

import (
	"embed"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
)

// The console's pages: templates/*.html, each inside the shell's layout.
//
//go:embed templates/*.html
var files embed.FS

// render writes the console's page name.
func (s *API) render(c *gin.Context, status int, name string, p *shell.Page) {
	s.shell.Render(c, status, s.views, name, p)
}
