package apicall

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/tool"
)

// The request parts an api_call's arguments may hold, and the two switches. `json_` is
// accepted as an alias of `json` and becomes `json` in the merged parts.
const (
	PartParams                 = "params"
	PartJSON                   = "json"
	PartJSONAlias              = "json_"
	PartData                   = "data"
	PartContent                = "content"
	PartFiles                  = "files"
	PartCookies                = "cookies"
	PartHeaders                = "headers"
	PartPath                   = "path"
	PartTimeout                = "timeout"
	PartFollowRedirects        = "follow_redirects"
	PartIncludeResponseContent = "include_response_content"
)

const knownParts = "params, json (or json_), data, content, files, cookies, headers, path, timeout, follow_redirects, include_response_content"

// Layer names, as messages and fields name them.
const (
	layerDef   = "api_call"
	layerCall  = "arguments"
	layerArgs  = "x-api_call-args"
	layerSetup = "x-api_call-setup"
)

// boundHeaders are the names of the headers an api_call sends that the call's own arguments did
// not choose: those of the definition (where secrets are resolved), of x-api_call-args and of
// x-api_call-setup, and the Cookie and Authorization headers whatever their source. A redirect
// to another origin drops them all (see redirectPolicy).
func boundHeaders(def *tool.APICallDef, metaArgs, metaSetup map[string]any) []string {
	names := []string{"Authorization", "Cookie"}
	if def != nil {
		for k := range def.Headers {
			names = append(names, http.CanonicalHeaderKey(k))
		}
	}
	for _, layer := range []map[string]any{metaArgs, metaSetup} {
		h, _ := layer[PartHeaders].(map[string]any)
		for k := range h {
			names = append(names, http.CanonicalHeaderKey(k))
		}
	}
	return names
}

// MergeParts merges the request parts of an api_call, key by key, in this order:
// definition < call < x-api_call-args < x-api_call-setup, except that the definition's headers win
// over the call's. Within a part that is an object (params, data, files, cookies, headers, path, and
// json when both sides are objects) keys merge one by one; any other part is replaced whole. Header
// names compare case-insensitively. A part given as null is treated as not given. It is pure: the
// inputs are not changed, and the result shares nothing with them.
//
// Each layer must hold only request parts: an unknown key, or a part of the wrong type, is an
// InvalidInput naming the layer and the key. The definition's method and URL are not parts; a layer
// that tries to set them is refused.
func MergeParts(def *tool.APICallDef, call, metaArgs, metaSetup map[string]any) (map[string]any, error) {
	d, err := defLayer(def)
	if err != nil {
		return nil, err
	}
	layers := []struct {
		name string
		m    map[string]any
	}{{layerDef, d}, {layerCall, call}, {layerArgs, metaArgs}, {layerSetup, metaSetup}}
	norm := make([]map[string]any, len(layers))
	for i, l := range layers {
		if norm[i], err = normalizeLayer(l.name, l.m); err != nil {
			return nil, err
		}
	}
	out := map[string]any{}
	for _, l := range norm {
		for k, v := range l {
			if k == PartHeaders {
				continue
			}
			out[k] = mergePart(k, out[k], v)
		}
	}
	// Headers: call < definition < x-api_call-args < x-api_call-setup.
	var headers map[string]any
	for _, i := range []int{1, 0, 2, 3} {
		if h, ok := norm[i][PartHeaders].(map[string]any); ok {
			headers, _ = mergePart(PartHeaders, headers, h).(map[string]any)
		}
	}
	if headers != nil {
		out[PartHeaders] = headers
	}
	return out, nil
}

func mergePart(key string, old, v any) any {
	switch key {
	case PartParams, PartData, PartFiles, PartCookies, PartHeaders, PartPath, PartJSON:
		om, ok1 := old.(map[string]any)
		nm, ok2 := v.(map[string]any)
		if !ok1 || !ok2 {
			return v
		}
		m := make(map[string]any, len(om)+len(nm))
		for k, x := range om {
			m[k] = x
		}
		for k, x := range nm {
			m[k] = x
		}
		return m
	}
	return v
}

// normalizeLayer checks a layer's keys and top-level types, and gives a deep copy in the jsonv form
// with json_ renamed json, params as an object and header names canonical.
func normalizeLayer(layer string, in map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(in))
	for k, raw := range in {
		v := jsonv.Normalize(jsonv.Clone(raw))
		field := fieldName(layer, k)
		if k == "url" || k == "method" {
			return nil, fault.Invalid(field, "%s: the definition fixes the method and URL; a call cannot set %q (fill {placeholders} in the URL's path with \"path\")", layer, k)
		}
		if v == nil {
			if !isPart(k) {
				return nil, unknownKey(layer, k)
			}
			continue
		}
		switch k {
		case PartParams:
			switch p := v.(type) {
			case string:
				m, err := parseQuery(field, p)
				if err != nil {
					return nil, err
				}
				v = m
			case map[string]any:
			default:
				return nil, wrongType(field, "a query string or an object", v)
			}
		case PartJSON, PartJSONAlias:
			if _, both := in[PartJSON]; both && k == PartJSONAlias && in[PartJSON] != nil {
				return nil, fault.Invalid(field, "%s: give json or json_, not both", layer)
			}
			k = PartJSON
		case PartData, PartFiles, PartCookies, PartPath:
			if _, ok := v.(map[string]any); !ok {
				return nil, wrongType(field, "an object", v)
			}
		case PartHeaders:
			h, ok := v.(map[string]any)
			if !ok {
				return nil, wrongType(field, "an object", v)
			}
			canon := make(map[string]any, len(h))
			for name, hv := range h {
				if !validHeaderName(name) {
					return nil, fault.Invalid(field+"."+name, "%q is not a valid header name", name)
				}
				canon[http.CanonicalHeaderKey(name)] = hv
			}
			v = canon
		case PartContent:
			if _, ok := v.(string); !ok {
				return nil, wrongType(field, "a base64 string", v)
			}
		case PartTimeout:
			if _, ok := jsonv.ToFloat(v); !ok {
				return nil, wrongType(field, "a number of seconds", v)
			}
		case PartFollowRedirects, PartIncludeResponseContent:
			b, ok := v.(bool)
			if !ok {
				return nil, wrongType(field, "true or false", v)
			}
			if k == PartFollowRedirects && b && layer != layerDef {
				return nil, fault.Invalid(field, "%s: follow_redirects can be turned on only by the tool's definition (api_call.follow_redirects), never by a call or metadata: a redirect may lead to another host", layer)
			}
		default:
			return nil, unknownKey(layer, k)
		}
		out[k] = v
	}
	return out, nil
}

func isPart(k string) bool { return slices.Contains(tool.APICallParts, k) }

func unknownKey(layer, k string) error {
	return fault.Invalid(fieldName(layer, k), "%s: unknown api_call argument %q; the arguments are the request parts: %s", layer, k, knownParts)
}

func wrongType(field, want string, v any) error {
	return fault.Invalid(field, "%s must be %s, got %s", field, want, jsonv.TypeName(v))
}

// fieldName names a part of a layer: the call's parts by their own name, the others prefixed.
func fieldName(layer, k string) string {
	if layer == layerCall {
		return k
	}
	return layer + "." + k
}

// parseQuery reads a params string ("a=1&b=2", with or without a leading "?") into the object form:
// a key given once maps to a string, a repeated key to an array of strings.
func parseQuery(field, s string) (map[string]any, error) {
	vals, err := url.ParseQuery(strings.TrimPrefix(s, "?"))
	if err != nil {
		return nil, fault.Invalid(field, "%s is not a valid query string: %v", field, err)
	}
	m := make(map[string]any, len(vals))
	for k, vs := range vals {
		if len(vs) == 1 {
			m[k] = vs[0]
			continue
		}
		arr := make([]any, len(vs))
		for i, x := range vs {
			arr[i] = x
		}
		m[k] = arr
	}
	return m, nil
}

// defLayer turns the definition's request parts into a layer like the others.
func defLayer(def *tool.APICallDef) (map[string]any, error) {
	m := map[string]any{}
	if def == nil {
		return m, nil
	}
	if len(def.Headers) > 0 {
		h := make(map[string]any, len(def.Headers))
		for k, v := range def.Headers {
			h[k] = v
		}
		m[PartHeaders] = h
	}
	if len(def.Cookies) > 0 {
		c := make(map[string]any, len(def.Cookies))
		for k, v := range def.Cookies {
			c[k] = v
		}
		m[PartCookies] = c
	}
	if def.Content != nil {
		m[PartContent] = *def.Content
	}
	if def.Data != nil {
		m[PartData] = def.Data
	}
	if def.Files != nil {
		m[PartFiles] = def.Files
	}
	if def.JSON != nil {
		m[PartJSON] = def.JSON
	}
	if len(def.Params) > 0 {
		p, err := jsonv.Decode(def.Params)
		if err != nil {
			return nil, fault.Invalid(layerDef+".params", "api_call.params is not valid JSON: %v", err)
		}
		if p != nil {
			m[PartParams] = p
		}
	}
	if def.FollowRedirects != nil {
		m[PartFollowRedirects] = *def.FollowRedirects
	}
	if def.Timeout != nil {
		m[PartTimeout] = int64(*def.Timeout)
	}
	if def.IncludeResponseContent != nil {
		m[PartIncludeResponseContent] = *def.IncludeResponseContent
	}
	return m, nil
}

// validHeaderName is RFC 9110's token rule.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c <= ' ' || strings.IndexByte("\"(),/:;<=>?@[\\]{}\x7f", c) >= 0 {
			return false
		}
	}
	return true
}
