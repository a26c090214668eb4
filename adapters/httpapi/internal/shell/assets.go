package shell

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// Asset is a stylesheet or a script a surface serves from its own origin:
// its URL carries a hash of its content, so it is cached for good.
type Asset struct {
	path, contentType string
	data              []byte
	url               string
}

// NewAsset reads file from fsys, to serve at path as contentType. A missing
// file is a build mistake and panics.
func NewAsset(fsys fs.FS, file, path, contentType string) *Asset {
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		panic("shell: asset " + file + " missing: " + err.Error())
	}
	sum := sha256.Sum256(data)
	return &Asset{path: path, contentType: contentType, data: data, url: path + "?v=" + hex.EncodeToString(sum[:6])}
}

// URL is the asset's versioned URL, for a page's link or script element.
func (a *Asset) URL() string { return a.url }

// Bytes is the asset's content.
func (a *Asset) Bytes() []byte { return a.data }

// Serve answers the asset, cached for good.
func (a *Asset) Serve(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=31536000, immutable")
	c.Data(http.StatusOK, a.contentType, a.data)
}

// Route registers the asset's GET route on k: public, no session.
func (a *Asset) Route(k *edge.Kit) {
	k.Handle(http.MethodGet, a.path, edge.Policy{Rate: edge.RatePublic}, a.Serve)
}

// The content types of the assets.
const (
	CSS        = "text/css; charset=utf-8"
	JavaScript = "text/javascript; charset=utf-8"
)
