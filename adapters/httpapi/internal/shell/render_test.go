package shell

import (
	"testing"
	"testing/fstest"
)

// twoPages are a surface's views of two pages, "a" and "b".
func twoPages() *Views {
	page := &fstest.MapFile{Data: []byte(`{{define "content"}}<p>{{.View}}</p>{{end}}`)}
	return (&Shell{}).NewViews(fstest.MapFS{"templates/a.html": page, "templates/b.html": page}, nil)
}

// panics reports whether f panics.
func panics(f func()) (did bool) {
	defer func() { did = recover() != nil }()
	f()
	return false
}

func TestTemplate_eachPageIsTypedOnce(t *testing.T) {
	views := twoPages()
	NewTemplate[*struct{ A string }](views, "a")
	if !panics(views.MustBeTyped) {
		t.Fatal("MustBeTyped passed with page b untyped")
	}
	if !panics(func() { NewTemplate[*struct{ B string }](views, "a") }) {
		t.Fatal("page a was typed twice")
	}
	if !panics(func() { NewTemplate[*struct{}](views, "c") }) {
		t.Fatal("a page views has not was typed")
	}
	NewTemplate[*struct{ B string }](views, "b")
	if panics(views.MustBeTyped) {
		t.Fatal("MustBeTyped panicked with every page typed")
	}
}
