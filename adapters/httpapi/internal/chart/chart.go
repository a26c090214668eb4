package chart

import (
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Input is one chart: a label per step and, per step, two values, the
// sign-ins and the failed sign-ins.
type Input struct {
	// ID prefixes the ids of the chart's title and description, which its
	// aria-labelledby names: unique in the page, of lower-case letters,
	// digits and hyphens, starting with a letter.
	ID string
	// Title names the chart ("Sign-ins, last 24 hours").
	Title string
	// Names name the two series; empty ones default to "Sign-ins" and
	// "Failed sign-ins".
	Names [2]string
	// Labels name the steps, oldest first ("14:00", "3 Nov").
	Labels []string
	// SignIns and Failed hold one value per label, none negative.
	SignIns []int
	Failed  []int
}

// Row is one step of the chart in words, for the text alternative.
type Row struct {
	Label   string
	SignIns int
	Failed  int
}

// Chart is a drawn chart.
type Chart struct {
	// SVG is the chart's markup, safe to embed as it is.
	SVG template.HTML
	// Names are the series' names and Rows the values, step by step: the
	// caller renders them as a table hidden from view but read by screen
	// readers (the SVG's description says only the totals).
	Names [2]string
	Rows  []Row
	// Summary is the description: the totals and the busiest step.
	Summary string
}

// The drawing's geometry, in the viewBox's units.
const (
	width      = 720
	height     = 240
	padLeft    = 44 // the values of the axis
	padRight   = 8
	padTop     = 12
	padBottom  = 28 // the labels of the steps
	plotWidth  = width - padLeft - padRight
	plotHeight = height - padTop - padBottom
	maxLabels  = 8 // steps labelled below the axis, at most
)

var idPattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`)

// Render draws in. A missing ID or one of other characters, values and
// labels of different lengths, no labels, or a negative value is an error.
func Render(in Input) (Chart, error) {
	if !idPattern.MatchString(in.ID) {
		return Chart{}, errors.New("chart: the id must be lower-case letters, digits and hyphens, starting with a letter")
	}
	n := len(in.Labels)
	if n == 0 || len(in.SignIns) != n || len(in.Failed) != n {
		return Chart{}, fmt.Errorf("chart: %d labels, %d sign-ins and %d failures: want as many of each, at least one", n, len(in.SignIns), len(in.Failed))
	}
	names := in.Names
	if names[0] == "" {
		names[0] = "Sign-ins"
	}
	if names[1] == "" {
		names[1] = "Failed sign-ins"
	}
	top, rows := 0, make([]Row, n)
	totals := [2]int{}
	busiest := 0
	for i := range n {
		if in.SignIns[i] < 0 || in.Failed[i] < 0 {
			return Chart{}, errors.New("chart: a value is negative")
		}
		rows[i] = Row{Label: in.Labels[i], SignIns: in.SignIns[i], Failed: in.Failed[i]}
		top = max(top, in.SignIns[i], in.Failed[i])
		totals[0] += in.SignIns[i]
		totals[1] += in.Failed[i]
		if in.SignIns[i]+in.Failed[i] > in.SignIns[busiest]+in.Failed[busiest] {
			busiest = i
		}
	}
	summary := fmt.Sprintf("%s: %d, %s: %d, over %d steps from %s to %s.", names[0], totals[0], names[1], totals[1], n, in.Labels[0], in.Labels[n-1])
	if totals[0]+totals[1] > 0 {
		summary += fmt.Sprintf(" Busiest: %s (%d and %d).", in.Labels[busiest], in.SignIns[busiest], in.Failed[busiest])
	}
	c := Chart{Names: names, Rows: rows, Summary: summary}
	c.SVG = template.HTML(draw(in.ID, in.Title, names, rows, niceCeiling(top), summary)) // #nosec G203 -- every text in it is escaped by esc, every number formatted here
	return c, nil
}

// draw writes the SVG: grid lines and their values, then per step a group
// of two bars (sign-ins, then failures) with its own title, then the
// labels of up to maxLabels steps.
func draw(id, title string, names [2]string, rows []Row, scale int, summary string) string {
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	f(`<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %d %d" width="100%%" role="img" aria-labelledby="%s-title %s-desc" focusable="false">`,
		width, height, id, id)
	f(`<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, id, esc(title), id, esc(summary))
	// The grid: zero, half and the top of the scale.
	for _, v := range []int{0, scale / 2, scale} {
		if v == scale/2 && (scale%2 != 0 || scale < 2) {
			continue
		}
		y := yOf(v, scale)
		f(`<line class="chart-grid" x1="%d" y1="%s" x2="%d" y2="%s" stroke="currentColor" stroke-opacity="0.2"/>`, padLeft, y, width-padRight, y)
		f(`<text class="chart-axis" x="%d" y="%s" text-anchor="end" dominant-baseline="middle" font-size="11" fill="currentColor">%d</text>`, padLeft-6, y, v)
	}
	step := float64(plotWidth) / float64(len(rows))
	bar := step * 0.4
	for i, r := range rows {
		x := float64(padLeft) + float64(i)*step + step*0.1
		f(`<g class="chart-step"><title>%s: %s %d, %s %d</title>`, esc(r.Label), esc(names[0]), r.SignIns, esc(names[1]), r.Failed)
		for j, v := range []int{r.SignIns, r.Failed} {
			class, fill := "chart-bar chart-bar-ok", "#2f6fde"
			if j == 1 {
				class, fill = "chart-bar chart-bar-failed", "#d14343"
			}
			f(`<rect class="%s" x="%s" y="%s" width="%s" height="%s" fill="%s"/>`,
				class, num(x+float64(j)*bar), yOf(v, scale), num(bar), num(barHeight(v, scale)), fill)
		}
		b.WriteString(`</g>`)
	}
	every := (len(rows) + maxLabels - 1) / maxLabels
	for i, r := range rows {
		if (len(rows)-1-i)%every != 0 { // the latest step is always labelled
			continue
		}
		x := float64(padLeft) + (float64(i)+0.5)*step
		f(`<text class="chart-label" x="%s" y="%d" text-anchor="middle" font-size="11" fill="currentColor">%s</text>`, num(x), height-8, esc(r.Label))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// barHeight is v's height on a scale whose top is scale.
func barHeight(v, scale int) float64 {
	return float64(v) / float64(scale) * plotHeight
}

// yOf is the y of v's top on a scale whose top is scale.
func yOf(v, scale int) string {
	return num(float64(padTop+plotHeight) - barHeight(v, scale))
}

// num writes a coordinate with at most two decimals.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// niceCeiling is the smallest of 1, 2, 5, 10, 20, 50, … at or above v (1
// for zero, so an empty chart has a scale).
func niceCeiling(v int) int {
	for p := 1; p <= math.MaxInt/50; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p >= v {
				return m * p
			}
		}
	}
	return v
}

// esc escapes s for XML text and attribute values, which HTML reads alike:
// <, >, &, quotes and line breaks become references, and characters XML
// cannot hold (NUL, other controls, bad UTF-8) become U+FFFD.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}
