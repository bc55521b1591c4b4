package pyexpr

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"

	"go.starlark.net/starlark"
	"go.yaml.in/yaml/v4"
)

// csvReader is Julep's csv.reader and csv.DictReader over a str (Julep wraps it in StringIO): the
// rows as lists of str, or as dicts keyed by the first row.
func csvReader(dicts bool) builtinFn {
	return func(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		var data string
		delim := ","
		if err := starlark.UnpackArgs(b.Name(), a, kw, "data", &data, "delimiter?", &delim); err != nil {
			return nil, err
		}
		if len([]rune(delim)) != 1 {
			return nil, fmt.Errorf("Error: delimiter must be a 1-character string")
		}
		r := csv.NewReader(strings.NewReader(data))
		r.Comma = []rune(delim)[0]
		r.FieldsPerRecord = -1
		r.LazyQuotes = true
		var rows []starlark.Value
		var header []string
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("Error: %v", err)
			}
			if dicts && header == nil {
				header = rec
				continue
			}
			if dicts {
				d := starlark.NewDict(len(header))
				for i, h := range header {
					var v starlark.Value = starlark.None
					if i < len(rec) {
						v = starlark.String(rec[i])
					}
					_ = d.SetKey(starlark.String(h), v)
				}
				rows = append(rows, d)
				continue
			}
			row := make([]starlark.Value, len(rec))
			for i, f := range rec {
				row[i] = starlark.String(f)
			}
			rows = append(rows, starlark.NewList(row))
		}
		return starlark.NewList(rows), nil
	}
}

// yamlLoad is Julep's load_yaml and yaml.safe_load. go.yaml.in/yaml reads YAML 1.2, where
// PyYAML reads 1.1: yes/no/on/off stay strings here.
func yamlLoad(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 1, &s); err != nil {
		return nil, err
	}
	if len(s) > 1_000_000 {
		return nil, fmt.Errorf("String exceeds maximum length of 1000000")
	}
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("YAMLError: %v", err)
	}
	return fromYAML(v, 0)
}

func fromYAML(v any, depth int) (starlark.Value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("YAML nested too deeply")
	}
	switch x := v.(type) {
	case int:
		return starlark.MakeInt(x), nil
	case uint64:
		return starlark.MakeUint64(x), nil
	case float64:
		return starlark.Float(x), nil
	case []any:
		l := make([]starlark.Value, len(x))
		for i, e := range x {
			sv, err := fromYAML(e, depth+1)
			if err != nil {
				return nil, err
			}
			l[i] = sv
		}
		return starlark.NewList(l), nil
	case map[string]any:
		d := starlark.NewDict(len(x))
		for k, e := range x {
			sv, err := fromYAML(e, depth+1)
			if err != nil {
				return nil, err
			}
			_ = d.SetKey(starlark.String(k), sv)
		}
		return d, nil
	case map[any]any:
		d := starlark.NewDict(len(x))
		for k, e := range x {
			sv, err := fromYAML(e, depth+1)
			if err != nil {
				return nil, err
			}
			kv, err := fromYAML(k, depth+1)
			if err != nil {
				return nil, err
			}
			_ = d.SetKey(kv, sv)
		}
		return d, nil
	}
	return toStar(v, depth)
}
