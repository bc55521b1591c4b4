package pyexpr_test

import (
	"context"
	"fmt"

	"sinew/internal/julep/pyexpr"
)

func Example() {
	names := map[string]string{"_": "$states.input.current", "steps": "$states.input.steps"}

	// A Python expression that maps to JSONata.
	js, err := pyexpr.Compile("$ _.topic.upper()", names)
	fmt.Println(js, err)

	// A literal stays a string.
	js, _ = pyexpr.Compile("plain text", names)
	fmt.Println(js)

	// What JSONata lacks runs in Eval, with only Julep's names and functions.
	class, reason := pyexpr.Classify("$ re.sub('[aeiou]', '', _.topic)", names)
	fmt.Println(class, reason != nil)
	v, err := pyexpr.Eval(context.Background(), "$ re.sub('[aeiou]', '', _.topic)", map[string]any{
		"_": map[string]any{"topic": "julep on step functions"},
	})
	fmt.Println(v, err)

	// And what runs nowhere says why.
	_, err = pyexpr.Compile("$ open('/etc/passwd')", names)
	fmt.Println(err)
	// Output:
	// $uppercase($states.input.current.topic) <nil>
	// "plain text"
	// eval true
	// jlp n stp fnctns <nil>
	// expression "open('/etc/passwd')": the function 'open' at offset 0 is not supported: it is not one of Julep's allowed functions (abs, all, any, bool, chunk_doc, dict, dump_json, dump_yaml, enumerate, extract_json, float, html_to_markdown, humanize_text_alpha, int, len, list, load_json, load_yaml, map, markdown_to_html, match_regex, max, min, nlp, range, reduce, round, search_regex, set, str, sum, tuple, zip)
}
