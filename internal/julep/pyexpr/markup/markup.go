// Package markup gives pyexpr's evaluator Julep's markdown_to_html and html_to_markdown.
//
// They need Markdown and HTML libraries that only the Lambda that evaluates expressions should
// link (the api function only classifies them), so they are provided when this package is
// imported, for its side effect:
//
//	import _ "sinew/internal/julep/pyexpr/markup"
package markup

import (
	"bytes"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/renderer/html"

	"sinew/internal/julep/pyexpr"
)

func init() {
	pyexpr.SetTextFunction("markdown_to_html", ToHTML)
	pyexpr.SetTextFunction("html_to_markdown", ToMarkdown)
}

// markdown is markdown2's default: raw HTML in the text is kept.
var markdown = goldmark.New(goldmark.WithRendererOptions(html.WithUnsafe()))

// ToHTML is markdown_to_html: CommonMark as HTML.
func ToHTML(s string) (string, error) {
	var b bytes.Buffer
	if err := markdown.Convert([]byte(s), &b); err != nil {
		return "", err
	}
	return b.String(), nil
}

// toMarkdown writes markdownify's defaults: setext headings for h1 and h2, * bullets, ** and *.
var toMarkdown = htmltomarkdown.NewConverter(htmltomarkdown.WithPlugins(base.NewBasePlugin(),
	commonmark.NewCommonmarkPlugin(commonmark.WithHeadingStyle(commonmark.HeadingStyleSetext),
		commonmark.WithBulletListMarker("*"), commonmark.WithStrongDelimiter("**"), commonmark.WithEmDelimiter("*"))))

// ToMarkdown is html_to_markdown: HTML as Markdown.
func ToMarkdown(s string) (string, error) {
	return toMarkdown.ConvertString(s)
}
