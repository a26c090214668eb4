package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// module is the parsed source of one Go module.
type module struct {
	root string // directory holding go.mod
	path string // the module path
	fset *token.FileSet
	pkgs map[string]*pkg // by directory relative to root, slash-separated ("." for the root)
}

// pkg is the Go files of one directory.
type pkg struct {
	dir    string // relative to the module root, slash-separated
	files  []*file
	consts map[string]*ast.ValueSpec // package-level constants of non-test files, by name
}

type file struct {
	name    string // relative to the module root
	test    bool
	ast     *ast.File
	imports map[string]string // local name -> import path
}

// loadModule parses every .go file of the module at root, skipping testdata,
// vendor, hidden directories and nested modules.
func loadModule(root string) (*module, error) {
	modPath, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	m := &module{root: root, path: modPath, fset: token.NewFileSet(), pkgs: map[string]*pkg{}}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root {
				if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(m.fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := path.Dir(rel)
		pk := m.pkgs[dir]
		if pk == nil {
			pk = &pkg{dir: dir, consts: map[string]*ast.ValueSpec{}}
			m.pkgs[dir] = pk
		}
		fl := &file{name: rel, test: strings.HasSuffix(rel, "_test.go"), ast: f, imports: map[string]string{}}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			local := path.Base(ip)
			if imp.Name != nil {
				local = imp.Name.Name
			}
			fl.imports[local] = ip
		}
		pk.files = append(pk.files, fl)
		if !fl.test {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for _, n := range vs.Names {
						pk.consts[n.Name] = vs
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func modulePath(root string) (string, error) {
	dir, err := os.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer dir.Close()
	f, err := dir.Open("go.mod")
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", filepath.Join(root, "go.mod"))
}

// under reports whether the relative directory dir is base or below it.
func under(dir, base string) bool {
	return dir == base || strings.HasPrefix(dir, base+"/")
}

// pkgsUnder returns the packages at or below the given directories, sorted.
func (m *module) pkgsUnder(bases ...string) []*pkg {
	var out []*pkg
	for dir, pk := range m.pkgs {
		for _, b := range bases {
			if under(dir, b) {
				out = append(out, pk)
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out
}

// rel turns an import path of this module into a directory relative to its
// root; ok is false for a path outside the module.
func (m *module) rel(importPath string) (string, bool) {
	if importPath == m.path {
		return ".", true
	}
	rest, ok := strings.CutPrefix(importPath, m.path+"/")
	return rest, ok
}

func (m *module) line(pos token.Pos) int { return m.fset.Position(pos).Line }
