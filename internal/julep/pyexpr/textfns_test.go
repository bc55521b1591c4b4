package pyexpr

import (
	"context"
	"strings"
	"testing"

	"sinew/internal/jsonv"
)

// TestTextHelpers: Julep's chunk_doc through Eval (package markup tests markdown_to_html and
// html_to_markdown).
func TestTextHelpers(t *testing.T) {
	many := strings.Repeat("One sentence here. ", 20)
	for _, tc := range []struct{ src, want string }{
		{"$ chunk_doc('Dr. Smith went to Washington. He met the U.S. president, e.g. at 3.5 p.m. today! Did it work? Yes.')",
			`["Dr. Smith went to Washington. He met the U.S. president, e.g. at 3.5 p.m. today! Did it work? Yes."]`},
		{"$ [len(c) for c in chunk_doc(_['many'])]", `[284,151]`},
		{"$ chunk_doc('First para without a stop\\n\\nSecond one.')", `["First para without a stop Second one."]`},
		{"$ chunk_doc('')", `[]`},
		{"$ len(chunk_doc('a. ' * 28))", `3`},
	} {
		v, err := Eval(context.Background(), tc.src, map[string]any{"_": map[string]any{"many": many}})
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if got := jsonv.EncodeString(v); got != tc.want {
			t.Errorf("%s = %s; want %s", tc.src, got, tc.want)
		}
	}
	if _, err := Eval(context.Background(), "$ chunk_doc(_)", map[string]any{"_": strings.Repeat("x", maxTextLen+1)}); err == nil || !strings.Contains(err.Error(), "maximum length") {
		t.Errorf("a text over Julep's limit: %v", err)
	}
	// Without package markup linked (this test's binary), markdown_to_html is still Julep's name
	// and needs the evaluator, but calling it says what is missing.
	if c, _ := Classify("$ markdown_to_html(_)", testNames); c != NeedsEval {
		t.Errorf("markdown_to_html classifies as %v, want NeedsEval", c)
	}
	if _, err := Eval(context.Background(), "$ markdown_to_html(_)", map[string]any{"_": "*a*"}); err == nil || !strings.Contains(err.Error(), "pyexpr/markup") {
		t.Errorf("markdown_to_html without package markup: %v", err)
	}
}
