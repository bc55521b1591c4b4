package eventbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Pattern is an EventBridge event pattern: the same JSON a rule carries in AWS, so local mode can
// route with the patterns the CDK deploys. Supported: exact values (strings, numbers, booleans,
// null) at any depth, and the filters prefix, suffix, equals-ignore-case, exists and anything-but
// (a value or a list of values). Numeric ranges, wildcard, cidr and $or are refused at parse time
// rather than matched wrongly.
type Pattern struct {
	fields map[string]any // field -> nested Pattern fields (map) or []matcher
}

type matcher func(v any, present bool) bool

// ParsePattern parses an EventBridge pattern.
func ParsePattern(data []byte) (Pattern, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return Pattern{}, fmt.Errorf("event pattern is not valid JSON: %w", err)
	}
	obj, ok := raw.(map[string]any)
	if !ok || len(obj) == 0 {
		return Pattern{}, errors.New("event pattern must be a non-empty JSON object")
	}
	fields, err := parseFields(obj, "")
	if err != nil {
		return Pattern{}, err
	}
	return Pattern{fields: fields}, nil
}

// MustParsePattern is ParsePattern for patterns written in code; it panics on a bad pattern.
func MustParsePattern(s string) Pattern {
	p, err := ParsePattern([]byte(s))
	if err != nil {
		panic(err)
	}
	return p
}

func parseFields(obj map[string]any, path string) (map[string]any, error) {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		where := strings.TrimPrefix(path+"."+k, ".")
		if strings.HasPrefix(k, "$") {
			return nil, fmt.Errorf("event pattern: %s is not supported in local mode", where)
		}
		switch v := v.(type) {
		case map[string]any:
			if len(v) == 0 {
				return nil, fmt.Errorf("event pattern: %s is an empty object", where)
			}
			nested, err := parseFields(v, where)
			if err != nil {
				return nil, err
			}
			out[k] = nested
		case []any:
			if len(v) == 0 {
				return nil, fmt.Errorf("event pattern: %s is an empty list", where)
			}
			ms := make([]matcher, 0, len(v))
			for _, item := range v {
				m, err := parseMatcher(item, where)
				if err != nil {
					return nil, err
				}
				ms = append(ms, m)
			}
			out[k] = ms
		default:
			return nil, fmt.Errorf("event pattern: %s must be a list of values or an object", where)
		}
	}
	return out, nil
}

func parseMatcher(item any, where string) (matcher, error) {
	filter, ok := item.(map[string]any)
	if !ok {
		want := item
		return func(v any, present bool) bool { return present && equal(v, want) }, nil
	}
	if len(filter) != 1 {
		return nil, fmt.Errorf("event pattern: %s: a filter object has exactly one key", where)
	}
	for name, arg := range filter {
		s, isString := arg.(string)
		switch name {
		case "prefix", "suffix", "equals-ignore-case":
			if !isString {
				return nil, fmt.Errorf("event pattern: %s: %s takes a string", where, name)
			}
			return func(v any, present bool) bool {
				vs, ok := v.(string)
				if !present || !ok {
					return false
				}
				switch name {
				case "prefix":
					return strings.HasPrefix(vs, s)
				case "suffix":
					return strings.HasSuffix(vs, s)
				}
				return strings.EqualFold(vs, s)
			}, nil
		case "exists":
			want, ok := arg.(bool)
			if !ok {
				return nil, fmt.Errorf("event pattern: %s: exists takes true or false", where)
			}
			return func(v any, present bool) bool { return present == want }, nil
		case "anything-but":
			values, isList := arg.([]any)
			if !isList {
				if _, nested := arg.(map[string]any); nested {
					return nil, fmt.Errorf("event pattern: %s: anything-but with a filter is not supported in local mode", where)
				}
				values = []any{arg}
			}
			return func(v any, present bool) bool {
				if !present {
					return false
				}
				for _, no := range values {
					if equal(v, no) {
						return false
					}
				}
				return true
			}, nil
		}
		return nil, fmt.Errorf("event pattern: %s: the %q filter is not supported in local mode", where, name)
	}
	return nil, fmt.Errorf("event pattern: %s: empty filter", where)
}

// equal compares JSON values as EventBridge does: numbers by value, everything else exactly.
func equal(a, b any) bool {
	an, aNum := a.(json.Number)
	bn, bNum := b.(json.Number)
	if aNum && bNum {
		af, err1 := an.Float64()
		bf, err2 := bn.Float64()
		return err1 == nil && err2 == nil && af == bf
	}
	if aNum || bNum {
		return false
	}
	switch a.(type) {
	case string, bool, nil:
		return a == b
	}
	return false // objects and lists never equal a pattern value
}

// Match reports whether an event (its envelope as parsed JSON) matches.
func (p Pattern) Match(event map[string]any) bool {
	if p.fields == nil {
		return false
	}
	return matchFields(p.fields, event)
}

func matchFields(fields map[string]any, obj map[string]any) bool {
	for k, rule := range fields {
		v, present := obj[k]
		switch rule := rule.(type) {
		case map[string]any:
			nested, ok := v.(map[string]any)
			if !ok || !matchFields(rule, nested) {
				return false
			}
		case []matcher:
			if !matchValue(rule, v, present) {
				return false
			}
		}
	}
	return true
}

// matchValue: a list in the event matches when any of its elements does.
func matchValue(ms []matcher, v any, present bool) bool {
	if list, ok := v.([]any); ok && present {
		for _, item := range list {
			if matchValue(ms, item, true) {
				return true
			}
		}
		return false
	}
	for _, m := range ms {
		if m(v, present) {
			return true
		}
	}
	return false
}
