package durable

import (
	"path/filepath"
	"testing"
)

// A definition is stored once however many executions start with it; a closed record keeps a ref
// to it (read by Definition, across a reopen), and only a running record is listed with it.
func TestDefinitionsStoredOncePerVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sfn.log")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defs := []string{`{"StartAt":"A"}`, `{"StartAt":"B"}`}
	for i, def := range []string{defs[0], defs[0], defs[0], defs[1]} {
		x := Execution{Arn: execArn + string(rune('a'+i)), Status: "RUNNING", Definition: def}
		if err := st.PutExecution(x); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			x.Status, x.Events = "SUCCEEDED", []byte(`[]`)
			if err := st.PutExecution(x); err != nil {
				t.Fatal(err)
			}
		}
	}
	for round := range 2 {
		if n := len(st.st.kv[bDefs]); n != 2 {
			t.Errorf("round %d: %d definitions stored for 2 versions", round, n)
		}
		xs, err := st.Executions()
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range xs {
			closed := x.Arn == execArn+"a"
			if closed != (x.Definition == "") || x.DefinitionRef == "" && closed {
				t.Errorf("round %d: %s (%s): definition %q, ref %q", round, x.Arn, x.Status, x.Definition, x.DefinitionRef)
			}
			if closed {
				if def, err := st.Definition(x.DefinitionRef); err != nil || def != defs[0] {
					t.Errorf("round %d: the closed execution's definition: %q %v", round, def, err)
				}
			}
		}
		st.Close()
		if st, err = Open(path); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Definition("nope"); err == nil {
		t.Error("an unknown ref gave a definition")
	}
	st.Close()
}
