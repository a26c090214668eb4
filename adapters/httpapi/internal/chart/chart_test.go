package chart_test

import (
	"encoding/xml"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/chart"
	"github.com/gatehouse/gatehouse/ports"
)

// node is an XML element with its attributes, text and children.
type node struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Text    string     `xml:",chardata"`
	Nodes   []node     `xml:",any"`
}

func (n node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// walk calls fn on n and every element below it.
func (n node) walk(fn func(node)) {
	fn(n)
	for _, c := range n.Nodes {
		c.walk(fn)
	}
}

// mustParse renders in and parses the SVG as strict XML.
func mustParse(t *testing.T, in chart.Input) (chart.Chart, node) {
	t.Helper()
	c, err := chart.Render(in)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	var root node
	d := xml.NewDecoder(strings.NewReader(string(c.SVG)))
	d.Strict = true
	if err := d.Decode(&root); err != nil {
		t.Fatalf("the SVG is not XML: %v\n%s", err, c.SVG)
	}
	if _, err := d.Token(); err != io.EOF {
		t.Fatalf("markup after the SVG: %v\n%s", err, c.SVG)
	}
	if root.XMLName.Local != "svg" {
		t.Fatalf("root is %s, want svg", root.XMLName.Local)
	}
	return c, root
}

// bars returns the heights of the bars of class, step by step.
func bars(t *testing.T, root node, class string) []float64 {
	t.Helper()
	var out []float64
	root.walk(func(n node) {
		if n.XMLName.Local == "rect" && strings.Contains(n.attr("class"), class) {
			h, err := strconv.ParseFloat(n.attr("height"), 64)
			if err != nil {
				t.Fatalf("bar height %q: %v", n.attr("height"), err)
			}
			out = append(out, h)
		}
	})
	return out
}

// Ensure values map to heights in proportion, on a scale whose top is the
// round value above the largest, and the chart is labelled for assistive
// technology: a title and a description it names, and rows of numbers.
func TestRender_values_map_to_heights(t *testing.T) {
	c, root := mustParse(t, chart.Input{ID: "day", Title: "Sign-ins, last 24 hours",
		Labels: []string{"10:00", "11:00", "12:00", "13:00"}, SignIns: []int{0, 10, 20, 5}, Failed: []int{1, 0, 4, 2}})
	ok, failed := bars(t, root, "chart-bar-ok"), bars(t, root, "chart-bar-failed")
	if len(ok) != 4 || len(failed) != 4 {
		t.Fatalf("%d and %d bars, want 4 of each", len(ok), len(failed))
	}
	// The scale's top is 20: 10 is half of the tallest bar, 5 a quarter.
	if ok[0] != 0 || ok[2] <= 0 || ok[1] != ok[2]/2 || ok[3] != ok[2]/4 || failed[2] != ok[2]/5 {
		t.Fatalf("heights %v and %v are not proportional to the values", ok, failed)
	}
	if root.attr("role") != "img" || root.attr("aria-labelledby") != "day-title day-desc" {
		t.Errorf("svg role %q, aria-labelledby %q", root.attr("role"), root.attr("aria-labelledby"))
	}
	var title, desc string
	root.walk(func(n node) {
		switch {
		case n.XMLName.Local == "title" && n.attr("id") == "day-title":
			title = n.Text
		case n.XMLName.Local == "desc" && n.attr("id") == "day-desc":
			desc = n.Text
		}
		if n.attr("style") != "" || strings.HasPrefix(strings.ToLower(n.XMLName.Local), "script") || n.XMLName.Local == "style" {
			t.Errorf("%s has a style or is a script or style element", n.XMLName.Local)
		}
	})
	if title != "Sign-ins, last 24 hours" || !strings.Contains(desc, "Sign-ins: 35") || !strings.Contains(desc, "Failed sign-ins: 7") {
		t.Errorf("title %q, desc %q", title, desc)
	}
	if len(c.Rows) != 4 || c.Rows[2] != (chart.Row{Label: "12:00", SignIns: 20, Failed: 4}) {
		t.Errorf("rows = %+v", c.Rows)
	}
}

// Ensure an all-zero series draws flat bars on a scale of one, and one
// step draws one pair of bars.
func TestRender_all_zero_and_single_step(t *testing.T) {
	_, root := mustParse(t, chart.Input{ID: "z", Labels: []string{"a", "b", "c"}, SignIns: []int{0, 0, 0}, Failed: []int{0, 0, 0}})
	for _, h := range append(bars(t, root, "chart-bar-ok"), bars(t, root, "chart-bar-failed")...) {
		if h != 0 {
			t.Fatalf("a bar of an all-zero series is %v high", h)
		}
	}
	c, root := mustParse(t, chart.Input{ID: "one", Labels: []string{"today"}, SignIns: []int{3}, Failed: []int{7}})
	ok, failed := bars(t, root, "chart-bar-ok"), bars(t, root, "chart-bar-failed")
	if len(ok) != 1 || len(failed) != 1 || failed[0] <= ok[0] || ok[0] <= 0 {
		t.Fatalf("one step: bars %v and %v", ok, failed)
	}
	if !strings.Contains(c.Summary, "Busiest: today") {
		t.Errorf("summary %q", c.Summary)
	}
}

// Ensure hostile text cannot inject markup: the labels, the title and the
// series' names come back as text, and the SVG holds no other element.
func TestRender_escapes_labels(t *testing.T) {
	hostile := `</title></svg><script>alert(1)</script><img src=x onerror="alert(2)">&amp;'` + "\x00\x1b"
	_, root := mustParse(t, chart.Input{ID: "x", Title: hostile, Names: [2]string{hostile, "<b>"},
		Labels: []string{hostile, "ok"}, SignIns: []int{1, 2}, Failed: []int{0, 1}})
	allowed := map[string]bool{"svg": true, "title": true, "desc": true, "line": true, "text": true, "g": true, "rect": true}
	texts := 0
	root.walk(func(n node) {
		if !allowed[n.XMLName.Local] {
			t.Errorf("element %q in the SVG", n.XMLName.Local)
		}
		for _, a := range n.Attrs {
			if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
				t.Errorf("attribute %s in the SVG", a.Name.Local)
			}
		}
		if strings.Contains(n.Text, "<script>alert(1)</script>") {
			texts++
		}
	})
	// The title, the label under the axis and the first step's title.
	if texts < 3 {
		t.Errorf("the hostile text is found as text %d times, want at least 3", texts)
	}
}

// Ensure bad input is refused.
func TestRender_refuses_bad_input(t *testing.T) {
	for name, in := range map[string]chart.Input{
		"no_labels":        {ID: "a"},
		"lengths_differ":   {ID: "a", Labels: []string{"x"}, SignIns: []int{1, 2}, Failed: []int{1}},
		"negative_value":   {ID: "a", Labels: []string{"x"}, SignIns: []int{-1}, Failed: []int{0}},
		"missing_id":       {Labels: []string{"x"}, SignIns: []int{1}, Failed: []int{0}},
		"id_with_a_quote":  {ID: `a" onload="x`, Labels: []string{"x"}, SignIns: []int{1}, Failed: []int{0}},
		"id_with_capitals": {ID: "Chart", Labels: []string{"x"}, SignIns: []int{1}, Failed: []int{0}},
	} {
		if _, err := chart.Render(in); err == nil {
			t.Errorf("%s: Render accepted it", name)
		}
	}
}

// Ensure a sign-in series becomes an input step by step, each start named
// by the caller's label.
func TestFromBuckets(t *testing.T) {
	start := time.Date(2026, 11, 28, 13, 0, 0, 0, time.UTC)
	in := chart.FromBuckets("day", "Sign-ins", []ports.SignInBucket{
		{Start: start, Succeeded: 4, Failed: 1}, {Start: start.Add(time.Hour), Succeeded: 0, Failed: 2},
	}, func(t time.Time) string { return t.Format("15:04") })
	c, err := chart.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []chart.Row{{Label: "13:00", SignIns: 4, Failed: 1}, {Label: "14:00", SignIns: 0, Failed: 2}}
	if !slices.Equal(c.Rows, want) {
		t.Fatalf("rows = %+v, want %+v", c.Rows, want)
	}
}
