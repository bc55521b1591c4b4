package console

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Graph is a state machine's definition laid out for drawing: boxes with absolute coordinates
// (top-left origin, pixels) and the edges between them. Map and Parallel states are boxes that hold
// their own states; a Parallel's branches are boxes of their own inside it.
type Graph struct {
	Nodes  []Node `json:"nodes"`
	Edges  []Edge `json:"edges"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// Node is a state, a Parallel branch (Type "Branch"), or the Start and End marks (Type "Start", "End").
type Node struct {
	ID     string `json:"id"` // the state's name (unique in a machine), or "@start", "@end", "Par/branch 1"
	Label  string `json:"label"`
	Type   string `json:"type"`
	Parent string `json:"parent,omitempty"` // the Map, Parallel or branch box that holds it
	Depth  int    `json:"depth"`
	X      int    `json:"x"`
	Y      int    `json:"y"`
	W      int    `json:"w"`
	H      int    `json:"h"`
	// Retry says the state retries, e.g. "×6 on Sinew.Transient, Lambda.ServiceException…".
	Retry    string `json:"retry,omitempty"`
	Resource string `json:"resource,omitempty"`
	Box      bool   `json:"box,omitempty"` // drawn as a container of other nodes
}

// Edge is a transition. Kind is next, choice, default, catch, retry (a loop on one state) or end.
type Edge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Kind  string `json:"kind"`
	Label string `json:"label,omitempty"`
	Back  bool   `json:"back,omitempty"` // it goes up (a loop), drawn around the side
	// Points are the edge's ends: the source's bottom (or side) and the target's top (or side).
	Points [][2]int `json:"points"`
}

// Layout sizes, in pixels.
const (
	nodeW    = 176
	nodeH    = 44
	markW    = 70
	markH    = 28
	gapX     = 44
	gapY     = 50
	padX     = 18
	padTop   = 34 // room for a box's title
	padBot   = 18
	labelMax = 42
)

// aslState is the part of a state that shapes the graph.
type aslState struct {
	Type     string           `json:"Type"`
	Next     string           `json:"Next"`
	End      bool             `json:"End"`
	Default  string           `json:"Default"`
	Resource string           `json:"Resource"`
	Choices  []map[string]any `json:"Choices"`
	Catch    []struct {
		ErrorEquals []string `json:"ErrorEquals"`
		Next        string   `json:"Next"`
	} `json:"Catch"`
	Retry []struct {
		ErrorEquals []string `json:"ErrorEquals"`
		MaxAttempts *int     `json:"MaxAttempts"`
	} `json:"Retry"`
	Branches      []aslScope `json:"Branches"`
	ItemProcessor *aslScope  `json:"ItemProcessor"`
	Iterator      *aslScope  `json:"Iterator"`
}

type aslScope struct {
	StartAt string              `json:"StartAt"`
	States  map[string]aslState `json:"States"`
	order   []string            // the States' keys as written
}

// UnmarshalJSON keeps the order the states are written in, which breaks ties in the layout.
func (s *aslScope) UnmarshalJSON(b []byte) error {
	type plain aslScope
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	var raw struct {
		States json.RawMessage `json:"States"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	s.order = objectKeys(raw.States)
	return nil
}

// objectKeys gives a JSON object's keys in document order.
func objectKeys(obj json.RawMessage) []string {
	dec := json.NewDecoder(strings.NewReader(string(obj)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, fmt.Sprint(t))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

// Layout lays a definition (Amazon States Language JSON) out as a graph.
func Layout(definition []byte) (*Graph, error) {
	var top aslScope
	if err := json.Unmarshal(definition, &top); err != nil {
		return nil, fmt.Errorf("the definition is not a state machine: %w", err)
	}
	if len(top.States) == 0 || top.StartAt == "" {
		return nil, fmt.Errorf("the definition has no StartAt or no States")
	}
	l := layoutScope(top, "", 0, true)
	return &Graph{Nodes: l.nodes, Edges: l.edges, Width: l.w, Height: l.h}, nil
}

// laid is a scope laid out with its top-left corner at 0,0.
type laid struct {
	nodes []Node
	edges []Edge
	w, h  int
}

// shifted moves a laid scope by dx, dy.
func (l *laid) shifted(dx, dy int) ([]Node, []Edge) {
	nodes := slices.Clone(l.nodes)
	for i := range nodes {
		nodes[i].X += dx
		nodes[i].Y += dy
	}
	edges := slices.Clone(l.edges)
	for i := range edges {
		pts := slices.Clone(edges[i].Points)
		for j := range pts {
			pts[j] = [2]int{pts[j][0] + dx, pts[j][1] + dy}
		}
		edges[i].Points = pts
	}
	return nodes, edges
}

// layoutScope lays out one scope (the machine, a Map's processor, a branch): the states in
// layers by longest path from StartAt, loops drawn back up the side. With marks, Start and End
// marks frame it, as the AWS console draws a machine.
func layoutScope(sc aslScope, parent string, depth int, marks bool) *laid {
	order := scopeOrder(sc)
	edges := scopeEdges(sc, order, marks)
	ids := order
	if marks {
		ids = append(append([]string{startID}, order...), endID)
	}
	layer := layers(ids, edges)
	// Each node's box, with what it holds.
	boxes := map[string]*Node{}
	inner := map[string]*laid{}
	for _, id := range ids {
		n, in := stateBox(sc, id, parent, depth)
		boxes[id], inner[id] = n, in
	}
	out := &laid{}
	rows := arrange(ids, edges, layer)
	y := 0
	for _, row := range rows {
		rowW, rowH := 0, 0
		for i, id := range row {
			if i > 0 {
				rowW += gapX
			}
			rowW += boxes[id].W
			rowH = max(rowH, boxes[id].H)
		}
		out.w = max(out.w, rowW)
		for _, id := range row {
			boxes[id].Y = y + (rowH-boxes[id].H)/2
		}
		y += rowH + gapY
	}
	out.h = max(0, y-gapY)
	for _, row := range rows {
		rowW := -gapX
		for _, id := range row {
			rowW += boxes[id].W + gapX
		}
		x := (out.w - rowW) / 2
		for _, id := range row {
			boxes[id].X = x
			x += boxes[id].W + gapX
		}
	}
	for _, id := range ids {
		out.nodes = append(out.nodes, *boxes[id])
		if in := inner[id]; in != nil {
			n, e := in.shifted(boxes[id].X+padX, boxes[id].Y+padTop) // stateBox centered it
			out.nodes = append(out.nodes, n...)
			out.edges = append(out.edges, e...)
		}
	}
	for _, e := range edges {
		out.edges = append(out.edges, route(e, boxes[e.From], boxes[e.To], layer))
	}
	return out
}

const (
	startID = "@start"
	endID   = "@end"
)

// scopeOrder gives a scope's states breadth-first from StartAt, following each state's exits in
// order, then any state nothing reaches, as written.
func scopeOrder(sc aslScope) []string {
	seen := map[string]bool{}
	var order []string
	queue := []string{sc.StartAt}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		st, ok := sc.States[id]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		order = append(order, id)
		for _, e := range exits(st) {
			queue = append(queue, e.To)
		}
	}
	for _, id := range sc.order {
		if !seen[id] {
			if _, ok := sc.States[id]; ok {
				order = append(order, id)
				seen[id] = true
			}
		}
	}
	return order
}

// exits are a state's transitions (From left empty).
func exits(st aslState) []Edge {
	var out []Edge
	if st.Next != "" {
		out = append(out, Edge{To: st.Next, Kind: "next"})
	}
	for i, c := range st.Choices {
		if next, _ := c["Next"].(string); next != "" {
			out = append(out, Edge{To: next, Kind: "choice", Label: choiceLabel(c, i)})
		}
	}
	if st.Default != "" {
		out = append(out, Edge{To: st.Default, Kind: "default", Label: "Default"})
	}
	for _, c := range st.Catch {
		if c.Next != "" {
			out = append(out, Edge{To: c.Next, Kind: "catch", Label: "Catch " + clipLabel(strings.Join(c.ErrorEquals, ", "))})
		}
	}
	return out
}

// scopeEdges are the scope's transitions, its retries as loops, and with marks the Start and End
// edges. A transition to a state the scope lacks is dropped (the definition's validator reports it).
func scopeEdges(sc aslScope, order []string, marks bool) []Edge {
	var out []Edge
	if marks {
		out = append(out, Edge{From: startID, To: sc.StartAt, Kind: "next"})
	}
	for _, id := range order {
		st := sc.States[id]
		for _, e := range exits(st) {
			if _, ok := sc.States[e.To]; ok {
				e.From = id
				out = append(out, e)
			}
		}
		if r := retryLabel(st); r != "" {
			out = append(out, Edge{From: id, To: id, Kind: "retry", Label: r})
		}
		// A Fail state ends the run too, but an edge from each one to End would cross the graph;
		// its type says it ends.
		if marks && (st.End || st.Type == "Succeed") {
			out = append(out, Edge{From: id, To: endID, Kind: "end"})
		}
	}
	return out
}

func choiceLabel(c map[string]any, i int) string {
	if cond, ok := c["Condition"].(string); ok {
		return clipLabel(strings.TrimSuffix(strings.TrimPrefix(cond, "{%"), "%}"))
	}
	v, _ := c["Variable"].(string)
	for k, val := range c {
		if k == "Next" || k == "Variable" || k == "Comment" || k == "Assign" || k == "Output" {
			continue
		}
		if v != "" {
			return clipLabel(fmt.Sprintf("%s %s %s", v, k, jsonLabel(val)))
		}
		return clipLabel(k + " …")
	}
	return fmt.Sprintf("rule %d", i+1)
}

// jsonLabel is a value as JSON text for a label, its <, > and & as they are: the page draws
// labels as text, where JSON's HTML escapes would show as \u003c.
func jsonLabel(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

func retryLabel(st aslState) string {
	var errs []string
	most := 0
	for _, r := range st.Retry {
		errs = append(errs, r.ErrorEquals...)
		n := 3 // Step Functions' default MaxAttempts
		if r.MaxAttempts != nil {
			n = *r.MaxAttempts
		}
		most = max(most, n)
	}
	if len(errs) == 0 || most == 0 {
		return ""
	}
	return clipLabel(fmt.Sprintf("Retry ×%d on %s", most, strings.Join(errs, ", ")))
}

func clipLabel(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > labelMax {
		return string(r[:labelMax-1]) + "…"
	}
	return s
}

// layers puts each node in a layer by the longest path to it from the first node, over the
// transitions that do not close a loop (found by a depth-first walk).
func layers(ids []string, edges []Edge) map[string]int {
	out := map[string][]string{}
	for _, e := range edges {
		if e.Kind != "retry" {
			out[e.From] = append(out[e.From], e.To)
		}
	}
	state := map[string]int{} // 1 on the walk's path, 2 done
	var post []string
	back := map[[2]string]bool{}
	var walk func(string)
	walk = func(id string) {
		state[id] = 1
		for _, to := range out[id] {
			switch state[to] {
			case 0:
				walk(to)
			case 1:
				back[[2]string{id, to}] = true
			}
		}
		state[id] = 2
		post = append(post, id)
	}
	for _, id := range ids {
		if state[id] == 0 {
			walk(id)
		}
	}
	layer := map[string]int{}
	for i := len(post) - 1; i >= 0; i-- { // reverse post-order: a topological order without the loops
		from := post[i]
		for _, to := range out[from] {
			if !back[[2]string{from, to}] && layer[to] < layer[from]+1 {
				layer[to] = layer[from] + 1
			}
		}
	}
	return layer
}

// arrange gives the rows of nodes, top to bottom, each ordered by where its predecessors are in
// the rows above (their barycentre), ties kept in walk order.
func arrange(ids []string, edges []Edge, layer map[string]int) [][]string {
	n := 0
	for _, id := range ids {
		n = max(n, layer[id]+1)
	}
	rows := make([][]string, n)
	for _, id := range ids {
		rows[layer[id]] = append(rows[layer[id]], id)
	}
	pos := map[string]float64{}
	preds := map[string][]string{}
	for _, e := range edges {
		if e.Kind != "retry" && layer[e.From] < layer[e.To] {
			preds[e.To] = append(preds[e.To], e.From)
		}
	}
	for r, row := range rows {
		if r > 0 {
			bary := map[string]float64{}
			for i, id := range row {
				bary[id] = (float64(i) + 0.5) / float64(len(row))
				if ps := preds[id]; len(ps) > 0 {
					sum := 0.0
					for _, p := range ps {
						sum += pos[p]
					}
					bary[id] = sum / float64(len(ps))
				}
			}
			slices.SortStableFunc(row, func(a, b string) int {
				switch {
				case bary[a] < bary[b]:
					return -1
				case bary[a] > bary[b]:
					return 1
				}
				return 0
			})
		}
		for i, id := range row {
			pos[id] = (float64(i) + 0.5) / float64(len(row))
		}
	}
	return rows
}

// stateBox sizes a node; for a Map or Parallel it also lays out what it holds.
func stateBox(sc aslScope, id, parent string, depth int) (*Node, *laid) {
	switch id {
	case startID:
		return &Node{ID: id, Label: "Start", Type: "Start", Parent: parent, Depth: depth, W: markW, H: markH}, nil
	case endID:
		return &Node{ID: id, Label: "End", Type: "End", Parent: parent, Depth: depth, W: markW, H: markH}, nil
	}
	st := sc.States[id]
	n := &Node{ID: id, Label: id, Type: st.Type, Parent: parent, Depth: depth, W: nodeW, H: nodeH,
		Retry: retryLabel(st), Resource: st.Resource}
	var in *laid
	switch st.Type {
	case "Map":
		proc := st.ItemProcessor
		if proc == nil {
			proc = st.Iterator
		}
		if proc != nil && len(proc.States) > 0 {
			in = layoutScope(*proc, id, depth+1, false)
		}
	case "Parallel":
		in = layoutBranches(st.Branches, id, depth)
	}
	if in != nil {
		n.Box = true
		n.W = max(nodeW, in.w+2*padX)
		n.H = in.h + padTop + padBot
		// Center what it holds.
		nodes, edges := in.shifted((n.W-in.w)/2-padX, 0)
		in = &laid{nodes: nodes, edges: edges, w: in.w, h: in.h}
	}
	return n, in
}

// layoutBranches lays a Parallel's branches side by side, each in a box of its own.
func layoutBranches(branches []aslScope, parent string, depth int) *laid {
	out := &laid{}
	x := 0
	for i, b := range branches {
		if len(b.States) == 0 {
			continue
		}
		id := fmt.Sprintf("%s/branch %d", parent, i+1)
		in := layoutScope(b, id, depth+2, false)
		box := Node{ID: id, Label: fmt.Sprintf("Branch %d", i+1), Type: "Branch", Parent: parent, Depth: depth + 1,
			X: x, Y: 0, W: in.w + 2*padX, H: in.h + padTop + padBot, Box: true}
		out.nodes = append(out.nodes, box)
		nodes, edges := in.shifted(x+padX, padTop)
		out.nodes = append(out.nodes, nodes...)
		out.edges = append(out.edges, edges...)
		x += box.W + gapX
		out.h = max(out.h, box.H)
	}
	out.w = max(0, x-gapX)
	if out.w == 0 {
		return nil
	}
	return out
}

// route gives an edge its ends: down from the source's bottom to the target's top, or, for a loop
// back up, from side to side; a retry loops on the source's right side.
func route(e Edge, from, to *Node, layer map[string]int) Edge {
	switch {
	case e.Kind == "retry":
		e.Points = [][2]int{{from.X + from.W, from.Y + from.H/3}, {from.X + from.W, from.Y + 2*from.H/3}}
	case layer[e.To] <= layer[e.From]:
		e.Back = true
		e.Points = [][2]int{{from.X + from.W, from.Y + from.H/2}, {to.X + to.W, to.Y + to.H/2}}
	default:
		e.Points = [][2]int{{from.X + from.W/2, from.Y + from.H}, {to.X + to.W/2, to.Y}}
	}
	return e
}
