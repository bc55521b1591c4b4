package console

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func readMachine(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "statemachines", name+".asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stateNames lists every state of a definition, nested ones too.
func stateNames(t *testing.T, def []byte) []string {
	t.Helper()
	var sc aslScope
	if err := json.Unmarshal(def, &sc); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(aslScope)
	walk = func(sc aslScope) {
		for name, st := range sc.States {
			out = append(out, name)
			if st.ItemProcessor != nil {
				walk(*st.ItemProcessor)
			}
			if st.Iterator != nil {
				walk(*st.Iterator)
			}
			for _, b := range st.Branches {
				walk(b)
			}
		}
	}
	walk(sc)
	return out
}

const parallelDef = `{"StartAt":"Fan","States":{
 "Fan":{"Type":"Parallel","Branches":[
   {"StartAt":"A1","States":{"A1":{"Type":"Pass","Next":"A2"},"A2":{"Type":"Pass","End":true}}},
   {"StartAt":"B1","States":{"B1":{"Type":"Wait","Seconds":1,"End":true}}}],
  "Catch":[{"ErrorEquals":["States.ALL"],"Next":"Oops"}],"Next":"Loop"},
 "Loop":{"Type":"Choice","Choices":[{"Variable":"$.again","BooleanEquals":true,"Next":"Fan"}],"Default":"Done"},
 "Oops":{"Type":"Fail","Error":"X"},
 "Done":{"Type":"Succeed"}}}`

func TestLayoutDrawsEveryStateWithoutOverlap(t *testing.T) {
	for _, tc := range []struct {
		name string
		def  []byte
	}{
		{"tool_call", readMachine(t, "tool_call")},
		{"agent_loop", readMachine(t, "agent_loop")},
		{"parallel", []byte(parallelDef)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Layout(tc.def)
			if err != nil {
				t.Fatal(err)
			}
			byID := map[string]Node{}
			for _, n := range g.Nodes {
				if _, dup := byID[n.ID]; dup {
					t.Fatalf("node %q twice", n.ID)
				}
				byID[n.ID] = n
			}
			for _, s := range append(stateNames(t, tc.def), startID, endID) {
				if _, ok := byID[s]; !ok {
					t.Errorf("state %q is not drawn", s)
				}
			}
			for _, a := range g.Nodes {
				if a.X < 0 || a.Y < 0 || a.X+a.W > g.Width || a.Y+a.H > g.Height {
					t.Errorf("%q (%d,%d %dx%d) is outside the graph %dx%d", a.ID, a.X, a.Y, a.W, a.H, g.Width, g.Height)
				}
				if p, ok := byID[a.Parent]; a.Parent != "" && (!ok || !inside(a, p)) {
					t.Errorf("%q is not inside its box %q", a.ID, a.Parent)
				}
				for _, b := range g.Nodes {
					if a.ID < b.ID && a.Parent == b.Parent && overlap(a, b) {
						t.Errorf("%q and %q overlap", a.ID, b.ID)
					}
				}
			}
			for _, e := range g.Edges {
				if _, ok := byID[e.From]; !ok {
					t.Errorf("edge from unknown %q", e.From)
				}
				if _, ok := byID[e.To]; !ok {
					t.Errorf("edge to unknown %q", e.To)
				}
				if len(e.Points) != 2 {
					t.Errorf("edge %s→%s has %d points", e.From, e.To, len(e.Points))
				}
			}
		})
	}
}

func inside(a, p Node) bool {
	return a.X >= p.X && a.Y >= p.Y && a.X+a.W <= p.X+p.W && a.Y+a.H <= p.Y+p.H
}

func overlap(a, b Node) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

// edgeSet is "from>to kind" for each edge.
func edgeSet(g *Graph) []string {
	var out []string
	for _, e := range g.Edges {
		s := e.From + ">" + e.To + " " + e.Kind
		if e.Back {
			s += " back"
		}
		out = append(out, s)
	}
	return out
}

func TestLayoutEdgesAndLayers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		def       []byte
		edges     []string // each must be there
		above     [][2]string
		parentOf  map[string]string
		retryNote map[string]string
	}{
		{name: "tool_call", def: readMachine(t, "tool_call"),
			edges: []string{"@start>Dispatch next", "Dispatch>@end end", "Dispatch>Dispatch retry", "Dispatch>Prepare catch", "Dispatch>Settle catch",
				"Prepare>Prepared next", "Prepare>PrepareFailed catch", "Prepare>Prepare retry", "Prepared>Function choice", "Prepared>Dispatch choice back",
				"Prepared>PrepareFailed default", "Function>Settle catch", "Function>@end end", "Settle>@end end"},
			above:     [][2]string{{"@start", "Dispatch"}, {"Dispatch", "Prepare"}, {"Prepare", "Prepared"}, {"Prepared", "Function"}, {"Function", "Settle"}, {"Settle", "@end"}},
			retryNote: map[string]string{"Prepare": "Retry ×6 on Sinew.Transient, Lambda.Servi…"}},
		{name: "agent_loop", def: readMachine(t, "agent_loop"),
			edges:    []string{"NextTurn>Model next back", "IsDone>RunCalls default", "RouteByType>ApiCall choice", "Done>@end end"},
			above:    [][2]string{{"Model", "IsDone"}, {"IsDone", "RunCalls"}, {"RunCalls", "NextTurn"}, {"RouteByType", "Integration"}},
			parentOf: map[string]string{"RouteByType": "RunCalls", "Collect": "RunCalls", "Model": ""}},
		{name: "parallel", def: []byte(parallelDef),
			edges:    []string{"Fan>Oops catch", "Loop>Fan choice back", "A1>A2 next", "Loop>Done default"},
			above:    [][2]string{{"Fan", "Loop"}, {"A1", "A2"}},
			parentOf: map[string]string{"A1": "Fan/branch 1", "B1": "Fan/branch 2", "Fan/branch 2": "Fan"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Layout(tc.def)
			if err != nil {
				t.Fatal(err)
			}
			got := edgeSet(g)
			for _, want := range tc.edges {
				if !slices.Contains(got, want) {
					t.Errorf("no edge %q in %v", want, got)
				}
			}
			byID := map[string]Node{}
			for _, n := range g.Nodes {
				byID[n.ID] = n
			}
			for _, p := range tc.above {
				if a, b := byID[p[0]], byID[p[1]]; a.Y+a.H > b.Y {
					t.Errorf("%s (y %d..%d) is not above %s (y %d)", p[0], a.Y, a.Y+a.H, p[1], b.Y)
				}
			}
			for id, want := range tc.parentOf {
				if got := byID[id].Parent; got != want {
					t.Errorf("%s's box = %q, want %q", id, got, want)
				}
			}
			for id, want := range tc.retryNote {
				if got := byID[id].Retry; got != want {
					t.Errorf("%s's retry = %q, want %q", id, got, want)
				}
			}
		})
	}
}

func TestLayoutRefusesWhatIsNotAMachine(t *testing.T) {
	for _, def := range []string{``, `[]`, `{"StartAt":"A"}`, `{"States":{"A":{"Type":"Pass","End":true}}}`, `{"StartAt":"A","States":{"A":1}}`} {
		if _, err := Layout([]byte(def)); err == nil {
			t.Errorf("Layout(%q) = nil error", def)
		}
	}
}

// Labels are text for the page to draw as it is: a value in a choice keeps its <, > and &
// (JSON's HTML escapes would show as \u003c).
func TestLayoutLabelsKeepTextAsWritten(t *testing.T) {
	for _, tc := range []struct {
		name, rule, want string
	}{
		{"markup", `{"Variable":"$.v","StringEquals":"<b>","Next":"B"}`, `$.v StringEquals "<b>"`},
		{"ampersand", `{"Variable":"$.v","StringEquals":"a&b","Next":"B"}`, `$.v StringEquals "a&b"`},
		{"quote", `{"Variable":"$.v","StringEquals":"\"x","Next":"B"}`, `$.v StringEquals "\"x"`},
		{"number", `{"Variable":"$.v","NumericEquals":3,"Next":"B"}`, `$.v NumericEquals 3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Layout([]byte(`{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[` + tc.rule + `],"Default":"B"},"B":{"Type":"Succeed"}}}`))
			if err != nil {
				t.Fatal(err)
			}
			var labels []string
			for _, e := range g.Edges {
				if e.Kind == "choice" {
					labels = append(labels, e.Label)
				}
			}
			if !slices.Equal(labels, []string{tc.want}) {
				t.Errorf("choice labels %q, want %q", labels, tc.want)
			}
		})
	}
}
