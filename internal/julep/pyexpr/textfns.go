package pyexpr

import (
	"fmt"
	"strings"
	"unicode"

	"go.starlark.net/starlark"
)

// Julep's text helpers (agents_api/common/utils/evaluator.py at 5371a620): chunk_doc (spaCy's
// sentences in windows of spacy-chunks) here; markdown_to_html (markdown2) and html_to_markdown
// (markdownify), which need libraries only the evaluating Lambda links, from package markup
// through SetTextFunction. The text is the same in kind, not byte for byte: the README lists the
// differences.
func init() {
	builtins["chunk_doc"] = textBuiltin("chunk_doc", chunkDoc)
	evalFunctions["chunk_doc"] = true
	for name := range libraryText {
		evalFunctions[name] = true
		builtins[name] = textBuiltin(name, func(string) (starlark.Value, error) {
			return nil, fmt.Errorf("%s is not linked into this program (package sinew/internal/julep/pyexpr/markup provides it)", name)
		})
	}
}

// libraryText are the text helpers SetTextFunction may provide. Eval knows their names whether
// or not they are provided (Classify tells they need the evaluator); one not provided is an error
// when an expression calls it.
var libraryText = map[string]bool{"markdown_to_html": true, "html_to_markdown": true}

// SetTextFunction provides name, one of Julep's text helpers that need a library of their own
// (markdown_to_html, html_to_markdown), to Eval. It is for package initialization (package
// markup's init): it panics on another name.
func SetTextFunction(name string, f func(string) (string, error)) {
	if !libraryText[name] {
		panic("pyexpr: " + name + " is not a text helper SetTextFunction provides")
	}
	builtins[name] = textBuiltin(name, func(s string) (starlark.Value, error) {
		out, err := f(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		return starlark.String(out), nil
	})
}

// textBuiltin is f as a builtin of one string argument, bounded by Julep's limit.
func textBuiltin(name string, f func(string) (starlark.Value, error)) *starlark.Builtin {
	return fn(name, charged(func(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		var s string
		if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 1, &s); err != nil {
			return nil, err
		}
		if len(s) > maxTextLen {
			return nil, fmt.Errorf("ValueError: String exceeds maximum length of %d", maxTextLen)
		}
		return f(s)
	}))
}

// maxTextLen is Julep's MAX_STRING_LENGTH.
const maxTextLen = 1_000_000

// Julep's spacy_chunks settings: windows of 15 sentences, each starting 12 after the last, the
// last window kept however short (truncate False).
const (
	chunkSentences = 15
	chunkOverlap   = 3
)

// chunkDoc is chunk_doc: the text's sentences, in windows of chunkSentences overlapping by
// chunkOverlap, each window's sentences joined by a space.
func chunkDoc(s string) (starlark.Value, error) {
	sents := sentences(s)
	var out []starlark.Value
	for i := 0; i < len(sents); i += chunkSentences - chunkOverlap {
		end := min(i+chunkSentences, len(sents))
		out = append(out, starlark.String(strings.Join(sents[i:end], " ")))
	}
	return starlark.NewList(out), nil
}

// abbreviations end with a period that does not end a sentence (spaCy's English tokenizer keeps
// them whole, so its sentencizer does not split after them).
var abbreviations = map[string]bool{
	"mr.": true, "mrs.": true, "ms.": true, "dr.": true, "prof.": true, "sr.": true, "jr.": true, "st.": true,
	"vs.": true, "etc.": true, "inc.": true, "ltd.": true, "co.": true, "corp.": true, "no.": true, "fig.": true,
	"jan.": true, "feb.": true, "mar.": true, "apr.": true, "jun.": true, "jul.": true, "aug.": true, "sep.": true,
	"sept.": true, "oct.": true, "nov.": true, "dec.": true, "mt.": true, "gen.": true, "gov.": true, "rev.": true,
}

// sentences splits text as spaCy's rule-based sentencizer does: a sentence ends at a word ending
// in '.', '!' or '?' (with any closing quotes or brackets after it) that is followed by space, or
// at a blank line; abbreviations and dotted initialisms ("e.g.", "U.S.") do not end one. Each
// sentence is its text without surrounding whitespace.
func sentences(text string) []string {
	var out []string
	start := 0
	flush := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	words := wordSpans(text)
	for i, w := range words {
		next := len(text)
		if i+1 < len(words) {
			next = words[i+1][0]
		}
		if endsSentence(text[w[0]:w[1]]) || strings.Count(text[w[1]:next], "\n") >= 2 {
			flush(w[1])
		}
	}
	flush(len(text))
	return out
}

// wordSpans are the byte ranges of text's whitespace-separated words.
func wordSpans(text string) [][2]int {
	var out [][2]int
	start := -1
	for i, r := range text {
		if unicode.IsSpace(r) {
			if start >= 0 {
				out = append(out, [2]int{start, i})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(text)})
	}
	return out
}

func endsSentence(word string) bool {
	w := strings.TrimRight(word, `"')]}’”»`)
	if w == "" || !strings.ContainsAny(w[len(w)-1:], ".!?") {
		return false
	}
	if strings.HasSuffix(w, "!") || strings.HasSuffix(w, "?") {
		return true
	}
	core := strings.TrimLeft(w, `"'([{‘“«`)
	if abbreviations[strings.ToLower(core)] {
		return false
	}
	return !initialism(strings.TrimSuffix(core, "."))
}

// initialism: "e.g", "U.S", "a.m" (the last period trimmed): short letter groups between periods.
func initialism(w string) bool {
	parts := strings.Split(w, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || len([]rune(p)) > 2 || strings.IndexFunc(p, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
			return false
		}
	}
	return true
}
