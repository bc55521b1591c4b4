package resources

import (
	"encoding/json"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// mergePatch applies an RFC 7386 JSON merge patch to target and answers the result; target is not
// changed. An object merges key by key, null removes a key, any other value replaces.
func mergePatch(target any, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return jsonv.Clone(patch)
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	out := make(map[string]any, len(t)+len(p))
	for k, v := range t {
		out[k] = jsonv.Clone(v)
	}
	for k, v := range p {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = mergePatch(out[k], v)
	}
	return out
}

// toValue is v in the jsonv form (through JSON), for merging.
func toValue(v any) (map[string]any, error) {
	b, err := jsonv.Encode(v)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode a record")
	}
	x, err := jsonv.Decode(b)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "decode a record")
	}
	m, _ := x.(map[string]any)
	return m, nil
}

// encodeBody is a map as request-body JSON, for decoding strictly into an input type.
func encodeBody(m map[string]any) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "the body cannot be written as JSON")
	}
	return b, nil
}
