package jsonata

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	mrand "math/rand/v2"

	"sinew/internal/jsonata"
	"sinew/internal/jsonv"
)

// awsFunctions are the functions Step Functions adds to JSONata, and $eval taken away.
var awsFunctions = map[string]*jsonata.Native{
	"partition": mustFunction("partition", "<an:a>", 2, partition),
	"range":     mustFunction("range", "<nnn:a>", 3, rangeFn),
	"hash":      mustFunction("hash", "<j-s:s>", 2, hashFn),
	"random":    mustFunction("random", "<n?:n>", 1, random),
	"uuid":      mustFunction("uuid", "<:s>", 0, uuid),
	"parse":     mustFunction("parse", "<s-:j>", 1, parse),
	"eval":      jsonata.Disabled,
}

func mustFunction(name, sig string, arity int, fn func([]any) (any, error)) *jsonata.Native {
	f, err := jsonata.NewFunction(name, sig, arity, fn)
	if err != nil {
		panic(err)
	}
	return f
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func partition(a []any) (any, error) {
	arr, _ := a[0].(*jsonata.Array)
	size := num(a[1])
	if size < 1 || size != math.Trunc(size) {
		return nil, fmt.Errorf("$partition: the chunk size must be a positive integer")
	}
	n := int(size)
	out := []any{}
	if arr != nil {
		for i := 0; i < len(arr.Items); i += n {
			end := min(i+n, len(arr.Items))
			out = append(out, jsonata.NewArray(append([]any(nil), arr.Items[i:end]...)))
		}
	}
	return jsonata.NewArray(out), nil
}

// rangeFn is $range; like any JSONata sequence, a single item comes back unwrapped (recorded:
// $range(1, 9, 9) is 1).
func rangeFn(a []any) (any, error) {
	start, end, step := num(a[0]), num(a[1]), num(a[2])
	if step == 0 {
		return nil, fmt.Errorf("$range: the step must not be zero")
	}
	out := []any{}
	for v := start; (step > 0 && v <= end) || (step < 0 && v >= end); v += step {
		out = append(out, v)
		if len(out) > 1000 {
			return nil, fmt.Errorf("$range: at most 1000 items")
		}
	}
	return jsonata.NewSequence(out), nil
}

func hashFn(a []any) (any, error) {
	var s string
	switch x := a[0].(type) {
	case string:
		s = x
	case nil:
		return nil, nil
	default:
		s = jsonv.EncodeString(jsonv.Normalize(jsonata.ToGo(x, true)))
	}
	alg, _ := a[1].(string)
	var h hash.Hash
	switch alg {
	case "MD5":
		h = md5.New()
	case "SHA-1":
		h = sha1.New()
	case "SHA-256":
		h = sha256.New()
	case "SHA-384":
		h = sha512.New384()
	case "SHA-512":
		h = sha512.New()
	default:
		return nil, fmt.Errorf("$hash: the algorithm must be one of MD5, SHA-1, SHA-256, SHA-384, SHA-512")
	}
	h.Write([]byte(s))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// random is $random([seed]): a seed makes the value repeatable.
func random(a []any) (any, error) {
	if seed, ok := a[0].(float64); ok {
		return mrand.New(mrand.NewPCG(uint64(int64(seed)), 0)).Float64(), nil
	}
	return mrand.Float64(), nil
}

func uuid(_ []any) (any, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], nil
}

func parse(a []any) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return nil, nil
	}
	v, err := jsonata.ParseJSON([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("$parse: %v", err)
	}
	return v, nil
}
