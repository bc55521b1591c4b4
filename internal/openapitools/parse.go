package openapitools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v4"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
)

// wire is the request body as sent: the document is a JSON object or a string of text.
type wire struct {
	Document   json.RawMessage       `json:"document"`
	BaseURL    string                `json:"base_url"`
	Prefix     string                `json:"prefix"`
	Operations []string              `json:"operations"`
	Security   map[string]Credential `json:"security"`
}

// DecodeRequest reads the route's body strictly: unknown fields and wrong types are named.
func DecodeRequest(body []byte) (*Request, error) {
	var w wire
	if err := httpapi.DecodeJSON(body, &w); err != nil {
		return nil, err
	}
	doc := bytes.TrimSpace(w.Document)
	switch {
	case len(doc) == 0 || string(doc) == "null":
		return nil, fault.Invalid("document", "document is required: the OpenAPI document, as a JSON object or as its JSON or YAML text in a string")
	case doc[0] == '"':
		var text string
		if err := json.Unmarshal(doc, &text); err != nil {
			return nil, fault.Invalid("document", "document is not a valid JSON string: %v", err)
		}
		doc = []byte(text)
	case doc[0] != '{':
		return nil, fault.Invalid("document", "document must be the OpenAPI document as a JSON object, or its JSON or YAML text in a string")
	}
	return &Request{Document: doc, BaseURL: w.BaseURL, Prefix: w.Prefix, Operations: w.Operations, Security: w.Security}, nil
}

// versionProbe reads only the fields that say what kind of document this is.
type versionProbe struct {
	OpenAPI any `json:"openapi" yaml:"openapi"`
	Swagger any `json:"swagger" yaml:"swagger"`
}

// load parses and resolves the document. Every fault of the document is an InvalidInput on
// "document" naming it: not JSON or YAML, not OpenAPI 3.0 or 3.1, a $ref that does not resolve
// (or leaves the document).
func load(text []byte) (*openapi3.T, error) {
	if len(text) > MaxDocumentBytes {
		return nil, fault.Invalid("document", "the document is %d bytes; at most %d are read (import a smaller document, or split it by tag)", len(text), MaxDocumentBytes)
	}
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, fault.Invalid("document", "the document is empty")
	}
	var probe versionProbe
	var err error
	if t := bytes.TrimSpace(text); t[0] == '{' {
		err = json.Unmarshal(t, &probe)
	} else {
		err = yaml.Unmarshal(text, &probe)
	}
	if err != nil {
		return nil, fault.Invalid("document", "the document is neither JSON nor YAML: %s", firstLine(err.Error()))
	}
	if err := checkVersion(probe); err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false // an import reads nothing but the document
	doc, err := loader.LoadFromData(text)
	if err != nil {
		var ext *openapi3.DisallowedExternalRefError
		if errors.As(err, &ext) {
			return nil, fault.Invalid("document", "the document refers outside itself (%s); sinew reads one self-contained document: bundle it first (e.g. redocly bundle)", firstLine(err.Error()))
		}
		return nil, fault.Invalid("document", "the document cannot be read as OpenAPI: %s", firstLine(err.Error()))
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		if len(doc.Webhooks) == 0 {
			return nil, fault.Invalid("document", "the document has no paths: there is no operation to make a tool of")
		}
	}
	return doc, nil
}

func checkVersion(p versionProbe) error {
	if p.Swagger != nil {
		return fault.Invalid("document", "the document is Swagger (OpenAPI 2.0); sinew reads OpenAPI 3.0 and 3.1: convert it first (e.g. with swagger2openapi)")
	}
	v := fmt.Sprint(p.OpenAPI) // YAML reads an unquoted 3.1 as a number
	if p.OpenAPI == nil {
		return fault.Invalid("document", "the document has no \"openapi\" field: it is not an OpenAPI 3.0 or 3.1 document")
	}
	if !strings.HasPrefix(v, "3.0.") && !strings.HasPrefix(v, "3.1.") && v != "3.0" && v != "3.1" {
		return fault.Invalid("document", "the document is OpenAPI %v; sinew reads OpenAPI 3.0 and 3.1", p.OpenAPI)
	}
	return nil
}

// firstLine keeps a parser's message to its first line and a bounded length: enough to find the
// fault, without echoing the document back.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return truncate(s, 300)
}
