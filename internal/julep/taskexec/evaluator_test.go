package taskexec_test

import (
	"encoding/json"
	"strings"
	"testing"

	"sinew/internal/jsonv"
)

// TestEvaluatorInLocalMode: a task whose expressions do not all compile to JSONata (csv.reader, a
// slice with a step, markdown_to_html) is saved, and local mode runs it: the Task before each such
// step invokes the prepare function, which evaluates them, and the execution gives Python's
// answer with one transition per step. An expression that raises fails its step with Julep's
// error, not a 500.
func TestEvaluatorInLocalMode(t *testing.T) {
	l := startLocal(t, "", "--in-memory")
	agent := l.makeAgent()
	task := l.api("POST", "/agents/"+agent+"/tasks", map[string]any{"name": "evaluator", "main": steps(`[
		{"evaluate": {"rows": "$ list(csv.reader(_['csv']))", "n": "$ len(_['csv'])"}},
		{"if": "$ _['rows'][1::2] == [['1', '2']]",
		 "then": {"evaluate": {"odd": "$ inputs[0]['xs'][::2]", "html": "$ markdown_to_html('*' + _['rows'][0][0] + '*')"}},
		 "else": {"evaluate": {"odd": [], "html": ""}}},
		{"return": {"sum": "$ sum(_['odd'])", "html": "$ _['html']", "rows": "$ outputs[0]['rows']", "n": "$ outputs[0]['n']"}}]`)}, 201)
	x := l.api("POST", "/tasks/"+task["id"].(string)+"/executions", map[string]any{"input": map[string]any{
		"csv": "a,b\r\n1,2\r\n3,4\r\n", "xs": []any{1, 2, 3, 4, 5}}}, 201)
	id := x["id"].(string)
	done := l.waitStatus(id, "succeeded")
	// python3 gave the same values for the same expressions over the same input (csv, slices, sum);
	// markdown2 writes "*a*" as "<p><em>a</em></p>\n" (its README's example, "*boo!*").
	const python = `{"html":"<p><em>a</em></p>\n","n":15,"rows":[["a","b"],["1","2"],["3","4"]],"sum":9}`
	if out := compact(done["output"]); out != python {
		t.Errorf("output %s, want Python's %s", out, python)
	}
	ts := l.api("GET", "/executions/"+id+"/transitions", nil, 200)["items"].([]any)
	var kinds []string
	for _, tr := range ts {
		kinds = append(kinds, tr.(map[string]any)["type"].(string))
	}
	if got := strings.Join(kinds, ","); got != "init,step,step,step,finish" {
		t.Errorf("transitions %s: the evaluator's Tasks are part of their steps", got)
	}

	bad := l.api("POST", "/agents/"+agent+"/tasks", map[string]any{"name": "raises", "main": steps(`[
		{"evaluate": {"x": "$ _['xs'][::2]['k']"}}]`)}, 201)
	id = l.api("POST", "/tasks/"+bad["id"].(string)+"/executions", map[string]any{"input": map[string]any{"xs": []any{1}}}, 201)["id"].(string)
	failed := l.waitStatus(id, "failed")
	if e, _ := failed["error"].(string); !strings.HasPrefix(e, `Julep.StepError: expression "_['xs'][::2]['k']": `) {
		t.Errorf("error %q, want Julep.StepError naming the expression", e)
	}

	refused := l.api("POST", "/agents/"+agent+"/tasks", map[string]any{"name": "humanize", "main": steps(`[
		{"evaluate": {"x": "$ humanize_text_alpha(_['text'])"}}]`)}, 400)
	if msg, _ := json.Marshal(refused); !strings.Contains(string(msg), "main[0].evaluate.x") || !strings.Contains(string(msg), "Google Translate") {
		t.Errorf("humanize_text_alpha: %s, want a 400 naming the field and why", msg)
	}
}

func compact(v any) string { return jsonv.EncodeString(v) }
