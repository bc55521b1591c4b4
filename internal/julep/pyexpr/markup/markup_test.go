package markup_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"sinew/internal/jsonv"
	"sinew/internal/julep/pyexpr"
	"sinew/internal/julep/pyexpr/markup"
)

// TestThroughEval: markdown_to_html and html_to_markdown as Julep's expressions call them.
func TestThroughEval(t *testing.T) {
	env := map[string]any{"_": map[string]any{
		"md":   "# Title\n\nSome *text* and **bold**, [a link](https://x.org).\n\n- a\n- b\n",
		"html": `<h1>Title</h1><p>Some <em>text</em> and <strong>bold</strong>, <a href="https://x.org">a link</a>.</p><ul><li>a</li><li>b</li></ul>`,
	}}
	for _, tc := range []struct{ src, want string }{
		// The examples in markdown2's and markdownify's READMEs, with the text they give there.
		{"$ markdown_to_html('*boo!*')", `"<p><em>boo!</em></p>\n"`},
		{`$ html_to_markdown('<b>Yay</b> <a href="http://github.com">GitHub</a>')`, `"**Yay** [GitHub](http://github.com)"`},
		{"$ markdown_to_html(_['md'])", `"<h1>Title</h1>\n<p>Some <em>text</em> and <strong>bold</strong>, <a href=\"https://x.org\">a link</a>.</p>\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"`},
		{"$ markdown_to_html('<b>raw</b> *html*')", `"<p><b>raw</b> <em>html</em></p>\n"`},
		{"$ html_to_markdown(_['html'])", `"Title\n=====\n\nSome *text* and **bold**, [a link](https://x.org).\n\n* a\n* b"`},
	} {
		v, err := pyexpr.Eval(context.Background(), tc.src, env)
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if got := jsonv.EncodeString(v); got != tc.want {
			t.Errorf("%s = %s; want %s", tc.src, got, tc.want)
		}
	}
	if _, err := pyexpr.Eval(context.Background(), "$ markdown_to_html(_)", map[string]any{"_": strings.Repeat("x", 1_000_001)}); err == nil || !strings.Contains(err.Error(), "maximum length") {
		t.Errorf("a text over Julep's limit: %v", err)
	}
}

func ExampleToMarkdown() {
	md, err := markup.ToMarkdown("<h2>Hi</h2><p><b>bold</b> words</p>")
	if err != nil {
		fmt.Println(err)
	}
	fmt.Println(md)
	// Output:
	// Hi
	// ---
	//
	// **bold** words
}
