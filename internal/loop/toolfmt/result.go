package toolfmt

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"

	"sinew/internal/jsonv"
	"sinew/internal/tool"
)

// modelHeaders are the response headers a model can act on; the rest (date, server, caching,
// tracing) cost it tokens and tell it nothing.
var modelHeaders = []string{"content-type", "location", "retry-after", "www-authenticate", "link",
	"x-ratelimit-remaining", "x-ratelimit-reset"}

// ModelOutput is what the model is shown of a call's output. An api_call's result keeps Julep's
// shape for callers (the body both as base64 content and as json, every header), which costs a
// model the body twice: it is shown {status_code, headers, and one of json, text or content} instead,
// the body once (content, in base64, only when it is binary) with the headers of modelHeaders.
// Other outputs, and an api_call output not of that shape, are returned as they are.
func ModelOutput(t tool.Type, output any) any {
	if t != tool.TypeAPICall {
		return output
	}
	m, ok := output.(map[string]any)
	if !ok {
		// The executor's own struct, in-process: its JSON form is the map.
		v, err := jsonv.Decode([]byte(jsonv.EncodeString(output)))
		if m, ok = v.(map[string]any); err != nil || !ok {
			return output
		}
	}
	code, ok := m["status_code"]
	if !ok {
		return output
	}
	out := map[string]any{"status_code": code}
	if h := usefulHeaders(m["headers"]); len(h) > 0 {
		out["headers"] = h
	}
	switch content, _ := m["content"].(string); {
	case m["json"] != nil:
		out["json"] = m["json"]
	case content != "":
		b, err := base64.StdEncoding.DecodeString(content)
		if err == nil && utf8.Valid(b) && !strings.ContainsRune(string(b), 0) {
			out["text"] = string(b)
		} else {
			out["content"] = content
		}
	}
	return out
}

func usefulHeaders(v any) map[string]any {
	h, _ := v.(map[string]any)
	if hs, ok := v.(map[string]string); ok {
		h = make(map[string]any, len(hs))
		for k, v := range hs {
			h[k] = v
		}
	}
	out := map[string]any{}
	for k, v := range h {
		for _, want := range modelHeaders {
			if strings.EqualFold(k, want) {
				out[want] = v
			}
		}
	}
	return out
}
