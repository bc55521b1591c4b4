package console

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"strings"
	"testing"
)

// TestPicturesAreCurrent: each statemachines/<name>.svg is what `make pictures` draws from its
// definition today, so the pictures the README shows cannot drift from the machines.
func TestPicturesAreCurrent(t *testing.T) {
	pics, err := Pictures("../../statemachines")
	if err != nil {
		t.Fatal(err)
	}
	if len(pics) < 2 {
		t.Fatalf("%d pictures, want one per state machine (tool_call, agent_loop)", len(pics))
	}
	for _, p := range pics {
		old, err := os.ReadFile(p.Path)
		if err != nil {
			t.Errorf("%v: run make pictures", err)
			continue
		}
		if !bytes.Equal(old, p.SVG) {
			t.Errorf("%s is not what its definition draws: run make pictures", p.Path)
		}
	}
}

// TestSVGDrawsEveryState: the picture is well-formed XML naming every state, with Catch edges and
// Retry loops drawn, and names escaped.
func TestSVGDrawsEveryState(t *testing.T) {
	def := `{"StartAt": "A<b>", "States": {
	  "A<b>": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Retry": [{"ErrorEquals": ["Sinew.Transient"], "MaxAttempts": 3}],
	           "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Failed"}], "Next": "Pick"},
	  "Pick": {"Type": "Choice", "Choices": [{"Variable": "$.x", "StringEquals": "y", "Next": "Done"}], "Default": "Failed"},
	  "Failed": {"Type": "Fail"}, "Done": {"Type": "Succeed"}}}`
	g, err := Layout([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	svg := string(g.SVG())
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
	}
	for _, want := range []string{">A&lt;b&gt;<", ">Pick<", ">Failed<", ">Done<", `class="edge catch"`, `class="edge retry"`, "↻ ×3", `class="edge choice"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("the picture lacks %q:\n%s", want, svg)
		}
	}
}
