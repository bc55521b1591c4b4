package integrations

import (
	"encoding/json"
	"fmt"
	"mime/multipart"
	"sort"

	"sinew/internal/fault"
)

// WriteFormFields writes params as multipart form fields, in key order: strings as they are,
// numbers and booleans as text, lists as repeated fields, objects as JSON. A value that cannot be
// rendered is an InvalidInput error naming fieldPrefix.key.
func WriteFormFields(mw *multipart.Writer, fieldPrefix string, params map[string]any) error {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vals, err := FormValues(params[k])
		if err != nil {
			return fault.Invalid(fieldPrefix+"."+k, "%s.%s cannot be sent as a form field", fieldPrefix, k)
		}
		for _, v := range vals {
			if err := mw.WriteField(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// FormValues renders one parameter as form field values (see WriteFormFields).
func FormValues(v any) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{x}, nil
	case bool, int64, float64, int:
		return []string{fmt.Sprint(x)}, nil
	case []any:
		var out []string
		for _, e := range x {
			vs, err := FormValues(e)
			if err != nil {
				return nil, err
			}
			out = append(out, vs...)
		}
		return out, nil
	default:
		b, err := json.Marshal(x)
		return []string{string(b)}, err
	}
}
