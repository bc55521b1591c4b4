package pyexpr

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestTextHelpers: Julep's markdown_to_html, html_to_markdown and chunk_doc through Eval.
func TestTextHelpers(t *testing.T) {
	many := strings.Repeat("One sentence here. ", 20)
	for _, tc := range []struct{ src, want string }{
		// The examples in markdown2's and markdownify's READMEs, with the text they give there.
		{"$ markdown_to_html('*boo!*')", `"<p><em>boo!</em></p>\n"`},
		{`$ html_to_markdown('<b>Yay</b> <a href="http://github.com">GitHub</a>')`, `"**Yay** [GitHub](http://github.com)"`},
		{"$ markdown_to_html(_['md'])", `"<h1>Title</h1>\n<p>Some <em>text</em> and <strong>bold</strong>, <a href=\"https://x.org\">a link</a>.</p>\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"`},
		{"$ markdown_to_html('<b>raw</b> *html*')", `"<p><b>raw</b> <em>html</em></p>\n"`},
		{"$ html_to_markdown(_['html'])", `"Title\n=====\n\nSome *text* and **bold**, [a link](https://x.org).\n\n* a\n* b"`},
		{"$ chunk_doc('Dr. Smith went to Washington. He met the U.S. president, e.g. at 3.5 p.m. today! Did it work? Yes.')",
			`["Dr. Smith went to Washington. He met the U.S. president, e.g. at 3.5 p.m. today! Did it work? Yes."]`},
		{"$ [len(c) for c in chunk_doc(_['many'])]", `[284,151]`},
		{"$ chunk_doc('First para without a stop\\n\\nSecond one.')", `["First para without a stop Second one."]`},
		{"$ chunk_doc('')", `[]`},
		{"$ len(chunk_doc('a. ' * 28))", `3`},
	} {
		v, err := Eval(context.Background(), tc.src, map[string]any{"_": map[string]any{
			"md":   "# Title\n\nSome *text* and **bold**, [a link](https://x.org).\n\n- a\n- b\n",
			"html": `<h1>Title</h1><p>Some <em>text</em> and <strong>bold</strong>, <a href="https://x.org">a link</a>.</p><ul><li>a</li><li>b</li></ul>`,
			"many": many}})
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
		if got := strings.TrimSpace(b.String()); got != tc.want {
			t.Errorf("%s = %s; want %s", tc.src, got, tc.want)
		}
	}
	if _, err := Eval(context.Background(), "$ chunk_doc(_)", map[string]any{"_": strings.Repeat("x", maxTextLen+1)}); err == nil || !strings.Contains(err.Error(), "maximum length") {
		t.Errorf("a text over Julep's limit: %v", err)
	}
}
