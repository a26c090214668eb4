package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/token"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// Rule 1 ---------------------------------------------------------------------

// innerLayers never import a framework (rule 1).
var innerLayers = []string{"domain", "ports", "application"}

// frameworks are the module paths the inner layers may not depend on.
var frameworks = []string{
	"github.com/gin-gonic/gin",
	"github.com/danielgtaylor/huma/v2",
	"gorm.io/gorm",
	"github.com/google/wire",
}

func isInnerLayer(dir string) bool {
	for _, l := range innerLayers {
		if under(dir, l) {
			return true
		}
	}
	return false
}

func isFramework(importPath string) bool {
	for _, f := range frameworks {
		if importPath == f || strings.HasPrefix(importPath, f+"/") {
			return true
		}
	}
	return false
}

type listed struct {
	ImportPath string
	Imports    []string
	DepOnly    bool
}

func checkLayers(m *module) ([]violation, error) {
	args := []string{"list", "-deps", "-json=ImportPath,Imports,DepOnly"}
	for _, l := range innerLayers {
		if len(m.pkgsUnder(l)) > 0 {
			args = append(args, "./"+l+"/...")
		}
	}
	if len(args) == 3 {
		return nil, nil
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = m.root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v: %s", err, stderr.String())
	}
	imports := map[string][]string{}
	var roots []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list: %v", err)
		}
		imports[p.ImportPath] = p.Imports
		if !p.DepOnly {
			roots = append(roots, p.ImportPath)
		}
	}
	// reaches[p] is the framework package p depends on, or "" for none.
	reaches := map[string]string{}
	var reach func(p string) string
	reach = func(p string) string {
		if r, ok := reaches[p]; ok {
			return r
		}
		reaches[p] = "" // a cycle cannot occur in Go, but stay finite
		if isFramework(p) {
			reaches[p] = p
			return p
		}
		for _, imp := range imports[p] {
			if r := reach(imp); r != "" {
				reaches[p] = r
				return r
			}
		}
		return ""
	}
	var vs []violation
	for _, root := range roots {
		dir, ok := m.rel(root)
		if !ok || m.pkgs[dir] == nil {
			continue
		}
		for _, f := range m.pkgs[dir].files {
			if f.test {
				continue
			}
			for _, imp := range f.ast.Imports {
				ip, _ := strconv.Unquote(imp.Path.Value)
				if dir, ok := m.rel(ip); ok && isInnerLayer(dir) {
					continue // reported where that package's own import leaves the layers
				}
				bad := reach(ip)
				switch {
				case bad == "":
					continue
				case bad == ip:
					vs = append(vs, violation{f.name, m.line(imp.Pos()), 1,
						fmt.Sprintf("%s imports %s; domain, ports and application may not use gin, huma, gorm or wire", dir, ip)})
				default:
					vs = append(vs, violation{f.name, m.line(imp.Pos()), 1,
						fmt.Sprintf("%s imports %s, which depends on %s; domain, ports and application may not use gin, huma, gorm or wire", dir, ip, bad)})
				}
			}
		}
	}
	return vs, nil
}

// Rule 2 ---------------------------------------------------------------------

const (
	httpapiDir = "adapters/httpapi"
	edgeDir    = "adapters/httpapi/internal/edge"
	// shellDir is what the HTML surfaces share besides the edge.
	shellDir = "adapters/httpapi/internal/shell"
)

// The memory stores, and the use cases built on them for tests, which the
// contract packages' own tests may build their handlers on.
const (
	memoryDir      = "adapters/memory"
	usecaseTestDir = "test/usecasetest"
)

// contracts are the packages of adapters/httpapi, one per contract or surface.
var contracts = []string{"framework", "oidc", "admin", "backend", "pages", "explorer"}

// contractOf returns the contract directory dir belongs to, or "".
func contractOf(dir string) string {
	for _, c := range contracts {
		if under(dir, httpapiDir+"/"+c) {
			return httpapiDir + "/" + c
		}
	}
	return ""
}

func checkContracts(m *module) ([]violation, error) {
	var vs []violation
	for _, pk := range m.pkgsUnder(httpapiDir) {
		own := contractOf(pk.dir)
		if own == "" {
			continue
		}
		m.moduleImports(pk, own, true, func(f *file, imp *ast.ImportSpec, ip, dir string) {
			var why string
			switch {
			case under(dir, edgeDir), under(dir, "application"), under(dir, "domain"), under(dir, "ports"):
				return
			case f.test && (under(dir, memoryDir) || under(dir, usecaseTestDir)):
				return // a package's own tests build its handlers on the memory stores
			case under(dir, shellDir) && surfaceOf(pk.dir) != "":
				return // an HTML surface (pages) on the shell
			case contractOf(dir) != "":
				why = "another contract package"
			case under(dir, httpapiDir):
				why = "adapters/httpapi outside internal/edge"
			default:
				why = "outside internal/edge, application, domain and ports"
			}
			vs = append(vs, violation{f.name, m.line(imp.Pos()), 2,
				fmt.Sprintf("contract package %s imports %s (%s)", pk.dir, ip, why)})
		})
	}
	return vs, nil
}

// moduleImports calls fn for each import of pk's files (its test files too
// when withTests) that names a package of this module outside own, with
// that package's directory relative to the module root.
func (m *module) moduleImports(pk *pkg, own string, withTests bool, fn func(f *file, imp *ast.ImportSpec, ip, dir string)) {
	for _, f := range pk.files {
		if f.test && !withTests {
			continue
		}
		for _, imp := range f.ast.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if dir, ok := m.rel(ip); ok && !under(dir, own) {
				fn(f, imp, ip, dir)
			}
		}
	}
}

// Rule 5 ---------------------------------------------------------------------

// adaptersDir holds every adapter: the driving ones under httpapiDir, the
// driven ones (stores, mailers, hashers, limiters, …) beside it.
const adaptersDir = "adapters"

// adapterOf returns the adapter directory (adapters/<name>) dir belongs to.
func adapterOf(dir string) string {
	rest, _ := strings.CutPrefix(dir, adaptersDir+"/")
	name, _, _ := strings.Cut(rest, "/")
	return adaptersDir + "/" + name
}

func checkDrivenAdapters(m *module) ([]violation, error) {
	var vs []violation
	for _, pk := range m.pkgsUnder(adaptersDir) {
		if under(pk.dir, httpapiDir) || pk.dir == adaptersDir {
			continue
		}
		own := adapterOf(pk.dir)
		m.moduleImports(pk, own, false, func(f *file, imp *ast.ImportSpec, ip, dir string) {
			if !under(dir, "domain") && !under(dir, "ports") {
				vs = append(vs, violation{f.name, m.line(imp.Pos()), 5,
					fmt.Sprintf("driven adapter %s imports %s (outside domain, ports and %s)", pk.dir, ip, own)})
			}
		})
	}
	return vs, nil
}

// Rule 6 ---------------------------------------------------------------------

// htmlSurfaces are the packages of adapters/httpapi that answer HTML pages to
// people (the console, the account pages, the hosted sign-in pages), beside
// the API contract packages that answer JSON to programs. They share what
// they share through internal/shell and internal/edge, never through each
// other.
var htmlSurfaces = []string{httpapiDir + "/console", httpapiDir + "/account", httpapiDir + "/pages"}

// surfaceOf returns the HTML surface directory dir belongs to, or "".
func surfaceOf(dir string) string {
	for _, s := range htmlSurfaces {
		if under(dir, s) {
			return s
		}
	}
	return ""
}

func checkSurfaces(m *module) ([]violation, error) {
	var vs []violation
	for _, pk := range m.pkgsUnder(httpapiDir) {
		own, isSurface := surfaceOf(pk.dir), true
		if own == "" {
			own, isSurface = contractOf(pk.dir), false
		}
		if own == "" {
			continue
		}
		m.moduleImports(pk, own, true, func(f *file, imp *ast.ImportSpec, ip, dir string) {
			switch {
			case isSurface && surfaceOf(dir) != "":
				vs = append(vs, violation{f.name, m.line(imp.Pos()), 6,
					fmt.Sprintf("HTML surface %s imports the HTML surface %s", pk.dir, ip)})
			case isSurface && contractOf(dir) != "":
				vs = append(vs, violation{f.name, m.line(imp.Pos()), 6,
					fmt.Sprintf("HTML surface %s imports the API contract package %s", pk.dir, ip)})
			case !isSurface && surfaceOf(dir) != "":
				vs = append(vs, violation{f.name, m.line(imp.Pos()), 6,
					fmt.Sprintf("API contract package %s imports the HTML surface %s", pk.dir, ip)})
			}
		})
	}
	return vs, nil
}

// Rule 8 ---------------------------------------------------------------------

// applicationRoot is the package holding the whole application
// (application.Application): a global value no handler may reach.
const applicationRoot = "application"

func checkGlobalApplication(m *module) ([]violation, error) {
	var vs []violation
	for _, pk := range m.pkgsUnder(httpapiDir) {
		if pk.dir == httpapiDir {
			continue // the composition root hands each package its use cases
		}
		m.moduleImports(pk, pk.dir, true, func(f *file, imp *ast.ImportSpec, ip, dir string) {
			if dir == applicationRoot {
				vs = append(vs, violation{f.name, m.line(imp.Pos()), 8,
					fmt.Sprintf("%s imports the application root package %s; name the use cases it calls as fields, built in routes.go", pk.dir, ip)})
			}
		})
	}
	return vs, nil
}

// Rule 3 ---------------------------------------------------------------------

var prefixTests = map[string]bool{
	"HasPrefix": true, "TrimPrefix": true, "CutPrefix": true,
	"HasSuffix": true, "TrimSuffix": true, "CutSuffix": true,
}

// routePath matches a URL path that names at least one segment.
var routePath = regexp.MustCompile(`^/[A-Za-z0-9._~:-]`)

func checkPathTests(m *module) ([]violation, error) {
	var vs []violation
	for _, pk := range m.pkgsUnder(httpapiDir) {
		if under(pk.dir, edgeDir) {
			continue
		}
		for _, f := range pk.files {
			if f.test {
				continue
			}
			ast.Inspect(f.ast, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !prefixTests[sel.Sel.Name] {
					return true
				}
				x, ok := sel.X.(*ast.Ident)
				if !ok || f.imports[x.Name] != "strings" {
					return true
				}
				for _, arg := range call.Args {
					if s, ok := m.constString(pk, f, arg, 0); ok && routePath.MatchString(s) {
						vs = append(vs, violation{f.name, m.line(call.Pos()), 3,
							fmt.Sprintf("strings.%s tests the URL path %q; declare the policy on the route (internal/edge) instead", sel.Sel.Name, s)})
						break
					}
				}
				return true
			})
		}
	}
	return vs, nil
}

// constString evaluates e as a constant string: a literal, a constant of pk,
// a constant of a package of this module, or a sum of those.
func (m *module) constString(pk *pkg, f *file, e ast.Expr, depth int) (string, bool) {
	if depth > 20 {
		return "", false
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.ParenExpr:
		return m.constString(pk, f, e.X, depth+1)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		a, ok := m.constString(pk, f, e.X, depth+1)
		if !ok {
			return "", false
		}
		b, ok := m.constString(pk, f, e.Y, depth+1)
		return a + b, ok
	case *ast.Ident:
		return m.constNamed(pk, e.Name, depth)
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		if !ok || f == nil {
			return "", false
		}
		dir, ok := m.rel(f.imports[x.Name])
		if !ok || m.pkgs[dir] == nil {
			return "", false
		}
		return m.constNamed(m.pkgs[dir], e.Sel.Name, depth)
	}
	return "", false
}

// constNamed evaluates the package-level constant name of pk.
func (m *module) constNamed(pk *pkg, name string, depth int) (string, bool) {
	vs, ok := pk.consts[name]
	if !ok {
		return "", false
	}
	for i, n := range vs.Names {
		if n.Name != name || i >= len(vs.Values) {
			continue
		}
		// The constant's own file gives the imports its value refers to.
		var owner *file
		for _, f := range pk.files {
			if f.ast.Pos() <= vs.Pos() && vs.Pos() < f.ast.End() {
				owner = f
			}
		}
		return m.constString(pk, owner, vs.Values[i], depth+1)
	}
	return "", false
}

// Rule 4 ---------------------------------------------------------------------

// neutralDirs speak in neutral codes and bare field names (rule 4).
var neutralDirs = []string{"domain", "ports", "application", "adapters/memory", "adapters/gormstore"}

var (
	wireCode     = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)
	locationPfxs = []string{"body.", "query.", "path.", "header."}
	// sqlKeywords look like codes but are SQL the stores hand to the database.
	sqlKeywords = map[string]bool{
		"CURRENT_TIMESTAMP": true, "CURRENT_DATE": true, "CURRENT_TIME": true,
		"LOCALTIMESTAMP": true, "LOCALTIME": true,
	}
)

func checkWireVocabulary(m *module) ([]violation, error) {
	var vs []violation
	for _, pk := range m.pkgsUnder(neutralDirs...) {
		for _, f := range pk.files {
			if f.test {
				continue
			}
			skip := map[*ast.BasicLit]bool{}
			for _, imp := range f.ast.Imports {
				skip[imp.Path] = true
			}
			ast.Inspect(f.ast, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Field:
					if n.Tag != nil {
						skip[n.Tag] = true
					}
				case *ast.CallExpr:
					if envName(f, n) && len(n.Args) > 0 {
						if lit, ok := n.Args[0].(*ast.BasicLit); ok {
							skip[lit] = true
						}
					}
				case *ast.ValueSpec:
					for i, name := range n.Names {
						if strings.HasSuffix(name.Name, "Env") && i < len(n.Values) {
							if lit, ok := n.Values[i].(*ast.BasicLit); ok {
								skip[lit] = true
							}
						}
					}
				case *ast.BasicLit:
					if n.Kind != token.STRING || skip[n] {
						return true
					}
					s, err := strconv.Unquote(n.Value)
					if err != nil {
						return true
					}
					if msg := wireVocabulary(s); msg != "" {
						vs = append(vs, violation{f.name, m.line(n.Pos()), 4, msg})
					}
				}
				return true
			})
		}
	}
	return vs, nil
}

// envName reports whether call is os.Getenv, LookupEnv, Setenv or Unsetenv,
// whose first argument names an environment variable, not a code.
func envName(f *file, call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok || f.imports[x.Name] != "os" {
		return false
	}
	switch sel.Sel.Name {
	case "Getenv", "LookupEnv", "Setenv", "Unsetenv":
		return true
	}
	return false
}

// wireVocabulary says why s is a contract's wire vocabulary, or "".
func wireVocabulary(s string) string {
	if wireCode.MatchString(s) && !sqlKeywords[s] {
		return fmt.Sprintf("%q is an UPPER_SNAKE wire code; use a neutral code and map it in the contract package", s)
	}
	for _, p := range locationPfxs {
		if strings.HasPrefix(s, p) {
			return fmt.Sprintf("%q is a wire location; use the bare field name and let the contract package add %q", s, p)
		}
	}
	return ""
}

// Rule 7 ---------------------------------------------------------------------

// applicationDir holds the use cases, one package per bounded context; the
// root package gathers them for wiring, and sharedContext is what they
// share.
const (
	applicationDir = "application"
	sharedContext  = applicationDir + "/usecase"
)

// contextOf returns the bounded context (application/<name>) dir belongs
// to, or "" for the root package.
func contextOf(dir string) string {
	rest, ok := strings.CutPrefix(dir, applicationDir+"/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return applicationDir + "/" + name
}

func checkContexts(m *module) ([]violation, error) {
	var vs []violation
	for _, pk := range m.pkgsUnder(applicationDir) {
		own := contextOf(pk.dir)
		if own == "" {
			continue
		}
		m.moduleImports(pk, own, false, func(f *file, imp *ast.ImportSpec, ip, dir string) {
			if under(dir, applicationDir) && !under(dir, sharedContext) {
				vs = append(vs, violation{f.name, m.line(imp.Pos()), 7,
					fmt.Sprintf("application context %s imports %s; share through %s, or name what it needs as an interface of its own", own, ip, sharedContext)})
			}
		})
	}
	return vs, nil
}
