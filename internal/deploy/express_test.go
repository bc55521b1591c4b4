package deploy

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "write statemachines/tool_call_express.asl.json again from tool_call.asl.json")

// The Express definition is tool_call's, derived: the file on disk is what ExpressToolCall makes
// of tool_call.asl.json today (go test ./internal/deploy -run TestExpressDefinitionIsDerived -update
// writes it again).
func TestExpressDefinitionIsDerived(t *testing.T) {
	root := moduleRoot(t)
	std, err := os.ReadFile(filepath.Join(root, "statemachines/tool_call.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ExpressToolCall(std)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, ExpressFile)
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what ExpressToolCall derives from tool_call.asl.json: run go test ./internal/deploy -run TestExpressDefinitionIsDerived -update", ExpressFile)
	}
	for _, p := range []string{".waitForTaskToken", "${FunctionFunctionArn}", "task_token"} {
		if bytes.Contains(got, []byte(p)) {
			t.Errorf("the Express definition still holds %s", p)
		}
	}
}

// A tool_call whose Dispatch no longer has the shape the derivation rewrites is refused, not
// derived wrong.
func TestExpressDerivationRefusesAnotherShape(t *testing.T) {
	for name, def := range map[string]string{
		"not JSON":    `{`,
		"no Dispatch": `{"StartAt":"X","States":{"X":{"Type":"Pass","End":true}}}`,
		"request-response already": `{"StartAt":"Dispatch","States":{"Dispatch":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","End":true},
			"Prepare":{},"Prepared":{"Type":"Choice","Choices":[]},"Function":{},"Settle":{}}}`,
	} {
		if _, err := ExpressToolCall([]byte(def)); err == nil {
			t.Errorf("%s: derived", name)
		}
	}
}
