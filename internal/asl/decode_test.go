package asl

import (
	"reflect"
	"strings"
	"testing"

	"sinew/internal/jsonv"
)

var decodeSeeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `12`, `-12`, `1.5`, `1e3`, `1E+3`, `-1.25e-7`, `9223372036854775807`,
	`9223372036854775808`, `-9223372036854775809`, `1e400`, `-1e400`, `0.0`, `"plain"`, `"esc \" \\ \/ \b \f \n \r \t"`,
	`"\u00e9\u2028\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`, `"\ud83d\u0041"`, `"bad` + "\xff" + `utf8"`, "\"caf\u00e9\"",
	` { "a" : [ 1 , 2 , { "b" : null } ] , "a" : "dup" } `, `{"k":"v","n":{"m":[true,false,null,1.0,-2]}}`,
	`01`, `1.`, `.5`, `-`, `+1`, `1e`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `[1 2]`, `"ctl` + "\x01" + `"`, `"\x"`, `"\u12"`,
	`tru`, `nul`, `truex`, `[1]x`, `1 2`, ``, ` `, `"unterminated`, `{"a":1`, "\ufeff{}", strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

// FuzzDecodeMatchesJSONV holds decodeJSON to jsonv.Decode (encoding/json): the same values for
// every document it accepts, and an error for every one it refuses.
func FuzzDecodeMatchesJSONV(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, werr := jsonv.DecodeString(s)
		for _, got := range []func() (any, error){func() (any, error) { return decodeJSON([]byte(s)) }, func() (any, error) { return decodeJSONString(s) }} {
			v, err := got()
			if (err != nil) != (werr != nil) {
				t.Fatalf("%q: error %v, encoding/json's %v", s, err, werr)
			}
			if err != nil && err.Error() != werr.Error() {
				t.Fatalf("%q: error %q, encoding/json's %q", s, err, werr)
			}
			if !reflect.DeepEqual(v, want) {
				t.Fatalf("%q: %#v, encoding/json's %#v", s, v, want)
			}
		}
	})
}
