// Package chart draws the console's sign-in charts on the server, as SVG
// markup to embed in an html/template page under the strict CSP of the
// hosted pages: no script, no style attribute, only presentation
// attributes and classes (chart-*) that the console's stylesheet may
// restyle. Every text the caller gives is escaped, and the chart carries a
// title, a description and, for the caller to render as a visually hidden
// table, its numbers row by row.
package chart
