package integrations

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"sinew/internal/fault"
)

// toolSchema is a client's tool schema as toolfmt gives it: every keyword explain words.
const toolSchema = `{
	"type": "object",
	"properties": {
		"name": {"type": "string", "minLength": 3, "maxLength": 5, "pattern": "^[a-z]+$"},
		"n": {"type": "integer", "minimum": 1, "maximum": 10, "multipleOf": 2},
		"x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
		"sort": {"enum": ["asc", "desc"]},
		"v": {"const": 2},
		"site": {"type": "string", "format": "uri"},
		"mail": {"type": "string", "format": "email"},
		"tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3, "uniqueItems": true},
		"file": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
		"ref": {"$ref": "#/$defs/short"},
		"nested": {"type": "object", "properties": {"a": {"type": ["boolean", "null"]}}, "additionalProperties": false},
		"free": {"type": "object", "additionalProperties": {"type": "integer"}}
	},
	"required": ["name"],
	"additionalProperties": false,
	"$defs": {"short": {"type": "string", "maxLength": 2}}
}`

func toolSchemaMap(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(toolSchema), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCheckArguments(t *testing.T) {
	schema := toolSchemaMap(t)
	tests := []struct {
		name        string
		args        map[string]any
		field, want string // want "" means valid
	}{
		{"valid", map[string]any{"name": "abc", "n": int64(4), "x": 0.5, "sort": "asc", "v": int64(2), "site": "https://example.com/a?b=c",
			"mail": "a@example.com", "tags": []any{"a", "b"}, "file": []any{"x"}, "ref": "ab", "nested": map[string]any{"a": nil},
			"free": map[string]any{"k": int64(1)}}, "", ""},
		{"integral float is an integer", map[string]any{"name": "abc", "n": float64(4)}, "", ""},
		{"missing required", map[string]any{}, "arguments.name", "arguments.name is required"},
		{"unknown field", map[string]any{"name": "abc", "nmae": "x"}, "arguments.nmae", "arguments.nmae is not a known field"},
		{"wrong type", map[string]any{"name": int64(5)}, "arguments.name", "arguments.name must be of type string, not number"},
		{"null", map[string]any{"name": nil}, "arguments.name", "arguments.name must be of type string, not null"},
		{"too short", map[string]any{"name": "ab"}, "arguments.name", "arguments.name must be at least 3 characters long"},
		{"too long", map[string]any{"name": "abcdef"}, "arguments.name", "arguments.name must be at most 5 characters long"},
		{"pattern", map[string]any{"name": "ABC"}, "arguments.name", "arguments.name must match the pattern ^[a-z]+$"},
		{"not an integer", map[string]any{"name": "abc", "n": 2.5}, "arguments.n", "arguments.n must be of type integer, not number"},
		{"under minimum", map[string]any{"name": "abc", "n": int64(0)}, "arguments.n", "arguments.n must be at least 1"},
		{"over maximum", map[string]any{"name": "abc", "n": int64(12)}, "arguments.n", "arguments.n must be at most 10"},
		{"not a multiple", map[string]any{"name": "abc", "n": int64(3)}, "arguments.n", "arguments.n must be a multiple of 2"},
		{"exclusive minimum", map[string]any{"name": "abc", "x": int64(0)}, "arguments.x", "arguments.x must be greater than 0"},
		{"exclusive maximum", map[string]any{"name": "abc", "x": int64(1)}, "arguments.x", "arguments.x must be less than 1"},
		{"enum", map[string]any{"name": "abc", "sort": "up"}, "arguments.sort", `arguments.sort must be one of "asc", "desc"`},
		{"const", map[string]any{"name": "abc", "v": int64(3)}, "arguments.v", "arguments.v must be 2"},
		{"format uri", map[string]any{"name": "abc", "site": "example.com/a"}, "arguments.site", "arguments.site must be a valid uri"},
		{"format email", map[string]any{"name": "abc", "mail": "not an address"}, "arguments.mail", "arguments.mail must be a valid email"},
		{"too few items", map[string]any{"name": "abc", "tags": []any{}}, "arguments.tags", "arguments.tags must have at least 1 items"},
		{"too many items", map[string]any{"name": "abc", "tags": []any{"a", "b", "c", "d"}}, "arguments.tags", "arguments.tags must have at most 3 items"},
		{"repeated item", map[string]any{"name": "abc", "tags": []any{"a", "a"}}, "arguments.tags", "arguments.tags must not repeat an item (items 0 and 1 are equal)"},
		{"item type", map[string]any{"name": "abc", "tags": []any{"a", int64(1)}}, "arguments.tags[1]", "arguments.tags[1] must be of type string, not number"},
		{"oneOf by type", map[string]any{"name": "abc", "file": int64(1)}, "arguments.file", "arguments.file must be of type string or array, not number"},
		{"oneOf in the fitting branch", map[string]any{"name": "abc", "file": []any{"a", true}}, "arguments.file[1]", "arguments.file[1] must be of type string, not boolean"},
		{"through $ref", map[string]any{"name": "abc", "ref": "abc"}, "arguments.ref", "arguments.ref must be at most 2 characters long"},
		{"nested unknown", map[string]any{"name": "abc", "nested": map[string]any{"b": true}}, "arguments.nested.b", "arguments.nested.b is not a known field"},
		{"type list", map[string]any{"name": "abc", "nested": map[string]any{"a": "yes"}}, "arguments.nested.a", "arguments.nested.a must be of type boolean or null, not string"},
		{"additional properties schema", map[string]any{"name": "abc", "free": map[string]any{"k": "v"}}, "arguments.free.k", "arguments.free.k must be of type integer, not string"},
		{"first of several, and a count", map[string]any{"name": "ab", "n": int64(0), "sort": "up", "v": int64(1), "x": int64(5)},
			"arguments.n", "arguments.n must be at least 1; arguments.name must be at least 3 characters long; arguments.sort must be one of \"asc\", \"desc\"; and 2 more"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckArguments(schema, tc.args)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid arguments refused: %v", err)
				}
				return
			}
			if !fault.Is(err, fault.InvalidInput) {
				t.Fatalf("err %v (kind %s), want InvalidInput", err, fault.KindOf(err))
			}
			if f := fault.FieldOf(err); f != tc.field {
				t.Errorf("field %q, want %q", f, tc.field)
			}
			if m := fault.Message(err); m != tc.want {
				t.Errorf("message %q\nwant    %q", m, tc.want)
			}
		})
	}
}

func TestCheckArgumentsBadSchema(t *testing.T) {
	for _, s := range []string{`{"$ref": "#/$defs/missing"}`, `{"properties": {"a": {"pattern": "("}}}`} {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		if err := CheckArguments(m, map[string]any{"a": "x"}); !fault.Is(err, fault.Internal) {
			t.Errorf("%s: err %v, want Internal", s, err)
		}
	}
}

type secretSetup struct {
	Key    string   `json:"key" jsonschema:"minLength=40,pattern=^sk-"`
	Region string   `json:"region,omitempty" jsonschema:"enum=eu,enum=us"`
	URL    string   `json:"url,omitempty" jsonschema:"format=uri"`
	Scopes []string `json:"scopes,omitempty" jsonschema:"maxItems=1"`
}

// TestSetupValuesNotEchoed gives a secret where the setup schema refuses it, in every way a reflected
// setup schema can: the error names the field and the rule, never the value.
func TestSetupValuesNotEchoed(t *testing.T) {
	const secret = "SECRET-7f3a9c"
	_, cs, err := schemaFor(reflect.TypeFor[secretSetup](), true)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		setup map[string]any
		field string
	}{
		{"too short and no prefix", map[string]any{"key": secret}, "setup.key"},
		{"wrong type", map[string]any{"key": []any{secret, int64(1)}}, "setup.key"},
		{"object instead", map[string]any{"key": map[string]any{"v": secret}}, "setup.key"},
		{"not in enum", map[string]any{"key": "sk-" + strings.Repeat("x", 40), "region": secret}, "setup.region"},
		{"bad format", map[string]any{"key": "sk-" + strings.Repeat("x", 40), "url": secret + " x"}, "setup.url"},
		{"item of wrong type", map[string]any{"key": "sk-" + strings.Repeat("x", 40), "scopes": []any{map[string]any{"s": secret}}}, "setup.scopes[0]"},
		{"too many items", map[string]any{"key": "sk-" + strings.Repeat("x", 40), "scopes": []any{secret, secret}}, "setup.scopes"},
		{"unknown field", map[string]any{"key": "sk-" + strings.Repeat("x", 40), "extra": secret}, "setup.extra"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := cs.validate("setup", tc.setup)
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tc.field {
				t.Fatalf("err %v (field %q), want InvalidInput on %s", err, fault.FieldOf(err), tc.field)
			}
			if strings.Contains(err.Error(), "SECRET") || strings.Contains(fault.Message(err), "SECRET") {
				t.Errorf("the error echoes the value: %v", err)
			}
		})
	}
	// The check has teeth: the validator's own text, which sinew does not pass on, quotes the value.
	rs, err := cs.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.resolved.Validate(map[string]any{"key": secret}); err == nil || !strings.Contains(err.Error(), "SECRET") {
		t.Errorf("expected the validator's raw error to quote the value, got %v", err)
	}
}

func TestFormats(t *testing.T) {
	tests := []struct {
		format string
		valid  []string
		bad    []string
	}{
		{"uri", []string{"https://example.com", "http://127.0.0.1:8080/a?b#c", "mailto:a@b.c", "urn:isbn:0451450523"},
			[]string{"", "example.com", "/relative/path", "https://exa mple.com", "http://[::1", "%zz"}},
		{"uri-reference", []string{"/relative/path", "https://example.com", "#frag", ""}, []string{"a b", "http://[::1"}},
		{"email", []string{"a@example.com", "first.last+tag@sub.example.org"}, []string{"", "a", "a@", "Name <a@example.com>", "a @example.com"}},
		{"date-time", []string{"2024-02-29T12:30:00Z", "2024-02-29t12:30:00.123+02:00"}, []string{"2024-02-30T12:30:00Z", "2024-02-29 12:30:00Z", "2024-02-29T12:30:00", "today"}},
		{"date", []string{"2024-02-29"}, []string{"2023-02-29", "2024-2-1", "2024-02-29T00:00:00Z"}},
		{"time", []string{"12:30:00Z", "23:59:59.5+01:00"}, []string{"12:30:00", "25:00:00Z", "noon"}},
		{"uuid", []string{"123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000"}, []string{"123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g", ""}},
		{"ipv4", []string{"192.0.2.1"}, []string{"192.0.2", "256.0.0.1", "::1", "192.0.2.01"}},
		{"ipv6", []string{"::1", "2001:db8::1"}, []string{"192.0.2.1", "fe80::1%eth0", "2001:db8:::1"}},
		{"a format nobody asserts", []string{"anything"}, nil},
	}
	for _, tc := range tests {
		for _, s := range tc.valid {
			if !validFormat(tc.format, s) {
				t.Errorf("%s: %q refused", tc.format, s)
			}
		}
		for _, s := range tc.bad {
			if validFormat(tc.format, s) {
				t.Errorf("%s: %q accepted", tc.format, s)
			}
		}
	}
}
