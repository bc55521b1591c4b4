package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"sinew/internal/fault"
)

// Decode reads a tool from JSON strictly: unknown fields are refused by their full name, wrong JSON
// types name the field and the type it must be, and Julep's Python field names `json_` and `schema_`
// are accepted as aliases of `json` and `schema` (Julep stores them that way). It does not validate
// the tool's rules: call Validate for that.
func Decode(data []byte) (*Tool, error) {
	var t Tool
	if err := DecodeStrict(data, &t, ""); err != nil {
		return nil, err
	}
	return &t, nil
}

// aliases maps Julep's Python field names to the JSON names, per struct type.
var aliases = map[reflect.Type]map[string]string{
	reflect.TypeOf(APICallDef{}): {"json_": "json", "schema_": "schema"},
}

// DecodeStrict decodes data into v (a pointer to a struct) the way Decode does, naming fields from
// prefix (e.g. "tools[2]."). It is exported so request bodies that embed tools keep the same rules.
func DecodeStrict(data []byte, v any, prefix string) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("tool.DecodeStrict: need a non-nil pointer, got %T", v)
	}
	return decodeValue(bytes.TrimSpace(data), rv.Elem(), prefix)
}

func decodeValue(data []byte, rv reflect.Value, path string) error {
	if len(data) == 0 {
		return fault.Invalid(fieldName(path), "%s is empty; a JSON value is required", describe(path))
	}
	if string(data) == "null" {
		rv.SetZero()
		return nil
	}
	switch {
	case rv.Kind() == reflect.Pointer && isModelStruct(rv.Type().Elem()):
		nv := reflect.New(rv.Type().Elem())
		if err := decodeValue(data, nv.Elem(), path); err != nil {
			return err
		}
		rv.Set(nv)
		return nil
	case isModelStruct(rv.Type()):
		return decodeStruct(data, rv, path)
	case rv.Kind() == reflect.Map && isModelStruct(rv.Type().Elem()):
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(data, &raw); err != nil {
			return typeError(path, "an object", data)
		}
		m := reflect.MakeMapWithSize(rv.Type(), len(raw))
		for k, r := range raw {
			ev := reflect.New(rv.Type().Elem()).Elem()
			if err := decodeValue(r, ev, path+"."+k); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k), ev)
		}
		rv.Set(m)
		return nil
	}
	if rv.Kind() == reflect.Map && rv.Type().Elem().Kind() == reflect.String {
		// Decode value by value so a wrong value names its own key.
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(data, &raw); err != nil {
			return typeError(path, "an object", data)
		}
		m := reflect.MakeMapWithSize(rv.Type(), len(raw))
		for k, r := range raw {
			var s string
			if err := json.Unmarshal(r, &s); err != nil {
				return typeError(join(path, k), "a string", bytes.TrimSpace(r))
			}
			m.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(s))
		}
		rv.Set(m)
		return nil
	}
	if err := json.Unmarshal(data, rv.Addr().Interface()); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return fault.Invalid(fieldName(path), "%s is not valid JSON: %v", describe(path), err)
		}
		return typeError(path, jsonTypeOf(rv.Type()), data)
	}
	return nil
}

func decodeStruct(data []byte, rv reflect.Value, path string) error {
	if data[0] != '{' {
		return typeError(path, "an object", data)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return fault.Invalid(fieldName(path), "%s is not valid JSON: %v", describe(path), err)
	}
	if dec.More() {
		return fault.Invalid(fieldName(path), "%s has data after the JSON value", describe(path))
	}
	fields := jsonFields(rv.Type())
	alias := aliases[rv.Type()]
	seen := map[string]string{}
	for key, val := range raw {
		name := key
		if a, ok := alias[key]; ok {
			name = a
		}
		if other, dup := seen[name]; dup {
			return fault.Invalid(join(path, key), "%s and %s are the same field; send only %q", join(path, other), join(path, key), name)
		}
		seen[name] = key
		idx, ok := fields[name]
		if !ok {
			return fault.Invalid(join(path, key), "unknown field %s", join(path, key))
		}
		if err := decodeValue(val, rv.Field(idx), join(path, key)); err != nil {
			return err
		}
	}
	return nil
}

func jsonFields(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = i
	}
	return m
}

// isModelStruct reports whether t is one of this package's structs, decoded field by field.
func isModelStruct(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.PkgPath() == reflect.TypeOf(Tool{}).PkgPath()
}

func typeError(path, want string, data []byte) error {
	return fault.Invalid(fieldName(path), "%s must be %s, not %s", describe(path), want, jsonKind(data))
}

func jsonTypeOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean (true or false)"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		if t.Kind() == reflect.Map && t.Elem().Kind() == reflect.String {
			return "an object of strings"
		}
		return "an object"
	case reflect.Slice:
		if t == reflect.TypeOf(json.RawMessage{}) {
			return "JSON"
		}
		return "an array"
	case reflect.Pointer:
		return jsonTypeOf(t.Elem())
	case reflect.Interface:
		return "a JSON value"
	}
	return t.String()
}

func jsonKind(data []byte) string {
	if len(data) == 0 {
		return "nothing"
	}
	switch data[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(data, ".eE") {
		return "a number with a fraction"
	}
	if data[0] == '-' || (data[0] >= '0' && data[0] <= '9') {
		return "a number"
	}
	return "invalid JSON"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	if strings.HasSuffix(path, ".") {
		return path + key
	}
	return path + "." + key
}

func fieldName(path string) string { return strings.TrimSuffix(path, ".") }

func describe(path string) string {
	if p := fieldName(path); p != "" {
		return p
	}
	return "the body"
}
