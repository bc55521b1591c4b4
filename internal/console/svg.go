package console

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// svgMargin and svgRight are the page's margins around a graph: the right one leaves room for
// loops drawn up the side, retry notes and a loop's label (wider than the console page's 110, which
// clips a long Choice label there).
const (
	svgMargin = 24
	svgRight  = 200
)

// svgStyle is the console's drawing style for a machine that has not run, inlined so the
// picture stands alone (a README shows it without the console's stylesheet).
const svgStyle = `text{font-family:system-ui,-apple-system,"Segoe UI",sans-serif}
.box rect{fill:#f8fafc;stroke:#94a3b8;stroke-width:1.2}
.box text{font-size:12px;font-weight:600;fill:#475569}
.mark rect{fill:#e2e8f0;stroke:#94a3b8}
.mark text{font-size:11px;fill:#334155}
.node rect{fill:#fff;stroke:#b8c2cc;stroke-width:1.6}
.node .name{font-size:13px;font-weight:600;fill:#1f2937}
.node .sub{font-size:10.5px;fill:#64748b}
.edge path{fill:none;stroke:#8a96a3;stroke-width:1.5}
.edge.catch path{stroke:#d9822b;stroke-dasharray:5 3}
.edge.choice path{stroke:#5b7bb5}
.edge.default path{stroke:#8a96a3;stroke-dasharray:2 3}
.edge.retry path{stroke:#b7791f}
.edge text{font-size:10.5px;fill:#475569}
.edge text.retry{fill:#b7791f;font-weight:600}`

// SVG draws the graph as a standalone SVG picture, the way the console's State machines page
// draws it: boxes for Map, Parallel and branches, Catch edges dashed, Retry as a loop with its
// attempts, loops back up around the right side. The output depends on the graph alone, so a
// picture checked in beside a definition can be compared with a fresh drawing.
func (g *Graph) SVG() []byte {
	var b bytes.Buffer
	w, h := g.Width+2*svgMargin+svgRight, g.Height+2*svgMargin
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="%d %d %d %d" role="img">`+"\n",
		w, h, -svgMargin, -svgMargin, w, h)
	fmt.Fprintf(&b, "<style>\n%s\n</style>\n<defs>\n", svgStyle)
	for _, m := range [][2]string{{"arrow", "#8a96a3"}, {"arrow-catch", "#d9822b"}, {"arrow-choice", "#5b7bb5"}, {"arrow-retry", "#b7791f"}} {
		fmt.Fprintf(&b, `<marker id="%s" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="%s"/></marker>`+"\n", m[0], m[1])
	}
	b.WriteString("</defs>\n")
	boxes := slices.Clone(g.Nodes)
	boxes = slices.DeleteFunc(boxes, func(n Node) bool { return !n.Box })
	slices.SortStableFunc(boxes, func(a, b Node) int { return a.Depth - b.Depth }) // outer boxes first
	for _, n := range boxes {
		title := n.Label
		if n.Type != "Branch" {
			title += "  ·  " + n.Type
		}
		fmt.Fprintf(&b, `<g class="box"><rect x="%d" y="%d" width="%d" height="%d" rx="10"/><text x="%d" y="%d">%s</text></g>`+"\n",
			n.X, n.Y, n.W, n.H, n.X+12, n.Y+20, esc(title))
	}
	backs := 0
	for _, e := range g.Edges {
		k := 0
		if e.Back {
			k = backs
			backs++
		}
		svgEdge(&b, e, g.Width, k)
	}
	for _, n := range g.Nodes {
		svgNode(&b, n)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func svgNode(b *bytes.Buffer, n Node) {
	switch {
	case n.Box:
	case n.Type == "Start" || n.Type == "End":
		fmt.Fprintf(b, `<g class="mark"><rect x="%d" y="%d" width="%d" height="%d" rx="%d"/><text x="%d" y="%d" text-anchor="middle">%s</text></g>`+"\n",
			n.X, n.Y, n.W, n.H, n.H/2, n.X+n.W/2, n.Y+n.H/2+4, esc(n.Label))
	default:
		title := n.ID
		if n.Resource != "" {
			title += "\n" + n.Resource
		}
		if n.Retry != "" {
			title += "\n" + n.Retry
		}
		fmt.Fprintf(b, `<g class="node"><title>%s</title><rect x="%d" y="%d" width="%d" height="%d" rx="7"/>`+
			`<text class="name" x="%d" y="%d" text-anchor="middle">%s</text><text class="sub" x="%d" y="%d" text-anchor="middle">%s</text></g>`+"\n",
			esc(title), n.X, n.Y, n.W, n.H, n.X+n.W/2, n.Y+19, esc(n.Label), n.X+n.W/2, n.Y+34, esc(n.Type))
	}
}

func svgEdge(b *bytes.Buffer, e Edge, width, k int) {
	if len(e.Points) < 2 {
		return
	}
	x1, y1, x2, y2 := e.Points[0][0], e.Points[0][1], e.Points[1][0], e.Points[1][1]
	marker := map[string]string{"catch": "arrow-catch", "choice": "arrow-choice", "retry": "arrow-retry"}[e.Kind]
	if marker == "" {
		marker = "arrow"
	}
	var d string
	lx, ly, anchor := (x1+x2)/2, (y1+y2)/2, "middle"
	switch {
	case e.Kind == "retry":
		d = fmt.Sprintf("M %d %d C %d %d, %d %d, %d %d", x1, y1, x1+30, y1-8, x2+30, y2+8, x2+2, y2)
		lx, ly, anchor = x1+20, y1-5, "start"
	case e.Back:
		out, r := width+24+16*k, 14
		d = fmt.Sprintf("M %d %d H %d Q %d %d, %d %d V %d Q %d %d, %d %d H %d", x1, y1, out-r, out, y1, out, y1-r, y2+r, out, y2, out-r, y2, x2+2)
		lx, ly, anchor = out+4, (y1+y2)/2, "start"
	default:
		dy := max(24, (y2-y1)/2)
		d = fmt.Sprintf("M %d %d C %d %d, %d %d, %d %d", x1, y1, x1, y1+dy, x2, y2-dy, x2, y2-2)
	}
	fmt.Fprintf(b, `<g class="edge %s"><path d="%s" marker-end="url(#%s)"/>`, e.Kind, d, marker)
	if e.Label != "" {
		fmt.Fprintf(b, "<title>%s</title>", esc(e.Label))
		switch e.Kind {
		case "retry":
			label := strings.SplitN(strings.TrimPrefix(e.Label, "Retry "), " on ", 2)[0]
			fmt.Fprintf(b, `<text class="retry" x="%d" y="%d" text-anchor="%s">↻ %s</text>`, lx, ly, anchor, esc(label))
		case "choice", "default":
			fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="%s">%s</text>`, lx, ly, anchor, esc(shortLabel(e.Label)))
		}
	}
	b.WriteString("</g>\n")
}

// choiceRule is a Choice label's "<variable> <operator> <value>", drawn as its value.
var choiceRule = regexp.MustCompile(`^\S+ \w+ (.+)$`)

// shortLabel is what the page writes on a Choice edge (static/app.js's shortLabel).
func shortLabel(label string) string {
	if m := choiceRule.FindStringSubmatch(label); m != nil {
		label = m[1]
	}
	if r := []rune(label); len(r) > 28 {
		label = string(r[:28])
	}
	return label
}

func esc(s string) string { return html.EscapeString(s) }

// Picture is a state machine's picture and the path it belongs at.
type Picture struct {
	Path string // <dir>/<name>.svg, beside <dir>/<name>.asl.json
	SVG  []byte
}

// Pictures draws every <name>.asl.json definition in dir (statemachines/ for sinew's machines).
func Pictures(dir string) ([]Picture, error) {
	defs, err := filepath.Glob(filepath.Join(dir, "*.asl.json"))
	if err != nil {
		return nil, err
	}
	if len(defs) == 0 {
		return nil, fmt.Errorf("no *.asl.json definition in %s", dir)
	}
	var pics []Picture
	for _, def := range defs {
		data, err := os.ReadFile(def)
		if err != nil {
			return nil, err
		}
		g, err := Layout(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", def, err)
		}
		pics = append(pics, Picture{Path: strings.TrimSuffix(def, ".asl.json") + ".svg", SVG: g.SVG()})
	}
	return pics, nil
}
