package intrinsic

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/uuid"

	"sinew/internal/asl/jsonpath/javafmt"
	"sinew/internal/jsonv"
)

type function struct {
	minArgs, maxArgs int // maxArgs -1: no limit
	impl             func(c *call, args []any) (any, error)
}

var functions map[string]*function

func init() {
	// Built in init: the implementations refer to the table (through call.fn) only at run time.
	functions = map[string]*function{
		"Format":         {1, -1, format},
		"StringToJson":   {1, 1, stringToJSON},
		"JsonToString":   {1, 1, jsonToString},
		"Array":          {0, -1, array},
		"ArrayPartition": {2, 2, arrayPartition},
		"ArrayContains":  {2, 2, arrayContains},
		"ArrayRange":     {3, 3, arrayRange},
		"ArrayGetItem":   {2, 2, arrayGetItem},
		"ArrayLength":    {1, 1, arrayLength},
		"ArrayUnique":    {1, 1, arrayUnique},
		"Base64Encode":   {1, 1, base64Encode},
		"Base64Decode":   {1, 1, base64Decode},
		"Hash":           {2, 2, hashFn},
		"JsonMerge":      {3, 3, jsonMerge},
		"MathRandom":     {2, 3, mathRandom},
		"MathAdd":        {2, 2, mathAdd},
		"StringSplit":    {2, 2, stringSplit},
		"UUID":           {0, 0, uuidFn},
	}
}

// maxTextLen is AWS's documented limit on the input of Base64Encode, Base64Decode and Hash
// (10,000 characters; 10,001 is refused, observed on AWS).
const maxTextLen = 10000

// maxRange is AWS's limit on the array States.ArrayRange may build.
const maxRange = 1000

func arityText(fn *function) string {
	switch {
	case fn.maxArgs == fn.minArgs:
		return "expects " + itoa(fn.minArgs) + " argument(s)"
	case fn.maxArgs < 0:
		return "expects at least " + itoa(fn.minArgs) + " argument(s)"
	}
	return "expects " + itoa(fn.minArgs) + " to " + itoa(fn.maxArgs) + " arguments"
}

func itoa(n int) string { return strconv.Itoa(n) }

func ordinal(i int) string {
	return [...]string{"first", "second", "third", "fourth"}[min(i, 3)]
}

func wantString(c *call, args []any, i int) (string, error) {
	s, ok := args[i].(string)
	if !ok {
		return "", invalidArgs(c, "the "+ordinal(i)+" argument must be a string, got "+jsonv.TypeName(args[i]))
	}
	return s, nil
}

func wantArray(c *call, args []any, i int) ([]any, error) {
	a, ok := args[i].([]any)
	if !ok {
		return nil, invalidArgs(c, "the "+ordinal(i)+" argument must be an array, got "+jsonv.TypeName(args[i]))
	}
	return a, nil
}

// wantInt reads a number as AWS does for indexes, bounds and sizes: a fraction is cut toward zero
// (Java's (int) cast; observed on AWS: ArrayGetItem(…, 1.2) reads index 1, ArrayRange(1.6, 1.4, 1)
// gives [1]).
func wantInt(c *call, args []any, i int) (int64, error) {
	switch x := args[i].(type) {
	case int64:
		return clampInt32(x), nil
	case float64:
		if math.IsNaN(x) {
			return 0, nil
		}
		return clampInt32Float(math.Trunc(x)), nil
	}
	return 0, invalidArgs(c, "the "+ordinal(i)+" argument must be a number, got "+jsonv.TypeName(args[i]))
}

func clampInt32(x int64) int64 { return max(math.MinInt32, min(math.MaxInt32, x)) }

func clampInt32Float(f float64) int64 {
	return int64(max(math.MinInt32, min(math.MaxInt32, f)))
}

// textLen counts characters as Java does (UTF-16 code units).
func textLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// format is States.Format: the template's {} are replaced by the arguments in order, strings as
// they are and other values as Java prints them (null, 1.5, {Arg1=1, Arg2=[]}). The count of {}
// must equal the count of arguments, and a brace that is not part of {} (and not escaped) fails.
func format(c *call, args []any) (any, error) {
	tmplStr, err := wantString(c, args, 0)
	if err != nil {
		return nil, err
	}
	tmpl := c.args[0].tmpl
	if c.args[0].kind != argLiteral {
		tmpl = parseTemplate(tmplStr)
	}
	holes := 0
	for _, p := range tmpl {
		if p.bad != "" {
			return nil, invalidArgs(c, "the template has an unmatched '"+p.bad+"' (write \\"+p.bad+" for a literal brace)")
		}
		if p.placeholder {
			holes++
		}
	}
	if holes != len(args)-1 {
		return nil, invalidArgs(c, "the template has "+itoa(holes)+" {} but "+itoa(len(args)-1)+" value(s) follow it")
	}
	var b strings.Builder
	next := 1
	for _, p := range tmpl {
		if p.placeholder {
			b.WriteString(javafmt.String(args[next]))
			next++
			continue
		}
		b.WriteString(p.text)
	}
	return b.String(), nil
}

// parseTemplate reads a template that came from data rather than from a literal: {} are
// placeholders, \{ \} \\ escapes, any other brace is an error for format to report.
func parseTemplate(s string) []piece {
	var out []piece
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, piece{text: text.String()})
			text.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '}' || s[i+1] == '\\'):
			text.WriteByte(s[i+1])
			i++
		case c == '{' && i+1 < len(s) && s[i+1] == '}':
			flush()
			out = append(out, piece{placeholder: true})
			i++
		case c == '{' || c == '}':
			flush()
			out = append(out, piece{text: string(c), bad: string(c)})
		default:
			text.WriteByte(c)
		}
	}
	flush()
	return out
}

// stringToJSON parses a JSON string; an empty or blank string gives null (recorded).
func stringToJSON(c *call, args []any) (any, error) {
	s, err := wantString(c, args, 0)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	v, err := jsonv.DecodeString(s)
	if err != nil {
		e := invalidArgs(c, "the argument is not JSON: "+err.Error())
		e.Err = err
		return nil, e
	}
	return v, nil
}

// jsonToString writes compact JSON (recorded: {"Arg1":1,"Arg2":[]}).
func jsonToString(_ *call, args []any) (any, error) {
	return javafmt.JSON(args[0]), nil
}

func array(_ *call, args []any) (any, error) {
	out := make([]any, len(args))
	copy(out, args)
	return out, nil
}

func arrayPartition(c *call, args []any) (any, error) {
	arr, err := wantArray(c, args, 0)
	if err != nil {
		return nil, err
	}
	size, err := wantInt(c, args, 1)
	if err != nil {
		return nil, err
	}
	if size <= 0 {
		return nil, invalidArgs(c, "the chunk size must be a positive integer, got "+strconv.FormatInt(size, 10))
	}
	out := []any{}
	for i := 0; i < len(arr); i += int(size) {
		end := min(len(arr), i+int(size))
		chunk := make([]any, end-i)
		copy(chunk, arr[i:end])
		out = append(out, chunk)
	}
	return out, nil
}

// arrayContains compares by JSON value ([[1,2,3],2] contains [1,2,3]: recorded).
func arrayContains(c *call, args []any) (any, error) {
	arr, err := wantArray(c, args, 0)
	if err != nil {
		return nil, err
	}
	for _, e := range arr {
		if jsonv.Equal(e, args[1]) {
			return true, nil
		}
	}
	return false, nil
}

// arrayRange builds first, first+step, … up to last inclusive; negative steps count down; a step
// of 0 (after the cut toward zero) or more than 1000 elements fail (observed on AWS).
func arrayRange(c *call, args []any) (any, error) {
	var n [3]int64
	for i := range n {
		v, err := wantInt(c, args, i)
		if err != nil {
			return nil, err
		}
		n[i] = v
	}
	first, last, step := n[0], n[1], n[2]
	if step == 0 {
		return nil, invalidArgs(c, "the step must not be 0")
	}
	var count int64
	switch {
	case step > 0 && first <= last:
		count = (last-first)/step + 1
	case step < 0 && first >= last:
		count = (first-last)/(-step) + 1
	}
	if count > maxRange {
		return nil, invalidArgs(c, "the range would have "+strconv.FormatInt(count, 10)+" elements, more than "+itoa(maxRange))
	}
	out := make([]any, 0, count)
	for i := int64(0); i < count; i++ {
		out = append(out, first+i*step)
	}
	return out, nil
}

// arrayGetItem: the index is cut toward zero; a negative or too large index fails, except on an
// empty array, where AWS answers null (observed on AWS).
func arrayGetItem(c *call, args []any) (any, error) {
	arr, err := wantArray(c, args, 0)
	if err != nil {
		return nil, err
	}
	i, err := wantInt(c, args, 1)
	if err != nil {
		return nil, err
	}
	if len(arr) == 0 && i >= 0 {
		return nil, nil
	}
	if i < 0 || i >= int64(len(arr)) {
		return nil, invalidArgs(c, "index "+strconv.FormatInt(i, 10)+" is out of bounds for an array of "+itoa(len(arr)))
	}
	return arr[i], nil
}

func arrayLength(c *call, args []any) (any, error) {
	arr, err := wantArray(c, args, 0)
	if err != nil {
		return nil, err
	}
	return int64(len(arr)), nil
}

// arrayUnique keeps the first of equal values, in order.
func arrayUnique(c *call, args []any) (any, error) {
	arr, err := wantArray(c, args, 0)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(arr))
	for _, e := range arr {
		dup := false
		for _, seen := range out {
			if jsonv.Equal(e, seen) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, e)
		}
	}
	return out, nil
}

func base64Encode(c *call, args []any) (any, error) {
	s, err := wantString(c, args, 0)
	if err != nil {
		return nil, err
	}
	if textLen(s) > maxTextLen {
		return nil, invalidArgs(c, "the input is longer than "+itoa(maxTextLen)+" characters")
	}
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
}

// base64Decode decodes as Java's MIME decoder does, which AWS evidently uses: characters outside
// the alphabet are skipped, padding ends the data and may be missing (observed on AWS: "abc",
// "!!!invalid!!!" and " YWJjZA== " all decode).
func base64Decode(c *call, args []any) (any, error) {
	s, err := wantString(c, args, 0)
	if err != nil {
		return nil, err
	}
	if textLen(s) > maxTextLen {
		return nil, invalidArgs(c, "the input is longer than "+itoa(maxTextLen)+" characters")
	}
	clean := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '=' {
			break
		}
		if (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '+' || ch == '/' {
			clean = append(clean, ch)
		}
	}
	if len(clean)%4 == 1 {
		clean = clean[:len(clean)-1] // six bits make no byte
	}
	raw, err := base64.RawStdEncoding.DecodeString(string(clean))
	if err != nil {
		e := invalidArgs(c, "the input is not Base64: "+err.Error())
		e.Err = err
		return nil, e
	}
	return toValidUTF8(raw), nil
}

// toValidUTF8 decodes bytes as Java's new String(bytes, UTF_8): each malformed sequence becomes
// U+FFFD.
func toValidUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		sb.WriteRune(r)
		b = b[size:]
	}
	return sb.String()
}

var hashes = map[string]func() hash.Hash{
	"MD5":     md5.New,
	"SHA-1":   sha1.New,
	"SHA-256": sha256.New,
	"SHA-384": sha512.New384,
	"SHA-512": sha512.New,
}

// hashFn hashes the UTF-8 bytes of the data, lowercase hex. AWS hashes a non-string value by its
// text rather than refusing it (observed on AWS); the algorithm name must match exactly.
func hashFn(c *call, args []any) (any, error) {
	data, ok := args[0].(string)
	if !ok {
		data = javafmt.JSON(args[0])
	}
	alg, err := wantString(c, args, 1)
	if err != nil {
		return nil, err
	}
	newHash := hashes[alg]
	if newHash == nil {
		return nil, invalidArgs(c, "the algorithm must be one of MD5, SHA-1, SHA-256, SHA-384, SHA-512, got "+strconv.Quote(alg))
	}
	if textLen(data) > maxTextLen {
		return nil, invalidArgs(c, "the input is longer than "+itoa(maxTextLen)+" characters")
	}
	h := newHash()
	h.Write([]byte(data))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// jsonMerge is the shallow merge, the only one AWS supports: the second object's keys win, nested
// objects are replaced, not merged (recorded).
func jsonMerge(c *call, args []any) (any, error) {
	a, ok := args[0].(map[string]any)
	if !ok {
		return nil, invalidArgs(c, "the first argument must be an object, got "+jsonv.TypeName(args[0]))
	}
	b, ok := args[1].(map[string]any)
	if !ok {
		return nil, invalidArgs(c, "the second argument must be an object, got "+jsonv.TypeName(args[1]))
	}
	deep, ok := args[2].(bool)
	if !ok {
		return nil, invalidArgs(c, "the third argument must be a boolean, got "+jsonv.TypeName(args[2]))
	}
	if deep {
		return nil, invalidArgs(c, "only the shallow merge is supported: the third argument must be false")
	}
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out, nil
}

// mathRandom gives an integer in [start, end): bounds are cut toward zero and must leave at least
// one value (observed on AWS). With a seed the sequence is java.util.Random's, so a seeded call is
// deterministic as on AWS.
func mathRandom(c *call, args []any) (any, error) {
	start, err := wantInt(c, args, 0)
	if err != nil {
		return nil, err
	}
	end, err := wantInt(c, args, 1)
	if err != nil {
		return nil, err
	}
	if start >= end {
		return nil, invalidArgs(c, "the start must be less than the end")
	}
	bound := end - start
	if len(args) == 3 {
		var seed int64
		switch x := args[2].(type) {
		case int64:
			seed = x
		case float64:
			seed = int64(math.Trunc(x))
		default:
			return nil, invalidArgs(c, "the seed must be a number, got "+jsonv.TypeName(args[2]))
		}
		r := newJavaRandom(seed)
		if bound <= math.MaxInt32 {
			return start + int64(r.nextInt(int32(bound))), nil
		}
		return start + int64(uint64(r.nextLong())%uint64(bound)), nil
	}
	return start + rand.Int64N(bound), nil
}

// mathAdd rounds each operand half up, as Java's Math.round, before adding (recorded: 1.49+1.5 is
// 3, -1.5+0 is -1, -2.5+0 is -2).
func mathAdd(c *call, args []any) (any, error) {
	var sum int64
	for i := range 2 {
		switch x := args[i].(type) {
		case int64:
			sum += x
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, invalidArgs(c, "the "+ordinal(i)+" argument must be a finite number")
			}
			sum += javaRound(x)
		default:
			return nil, invalidArgs(c, "the "+ordinal(i)+" argument must be a number, got "+jsonv.TypeName(args[i]))
		}
	}
	return sum, nil
}

// javaRound is Math.round: the nearest integer, halves toward positive infinity.
func javaRound(f float64) int64 {
	r := math.Floor(f)
	if f-r >= 0.5 {
		r++
	}
	return int64(max(math.MinInt64, min(math.MaxInt64, r)))
}

// stringSplit splits on any of the delimiter characters and drops empty pieces, like Java's
// StringTokenizer (recorded: ("This.is+a,test=string", ".+,=") gives five words, (",,,,", ",")
// gives []).
func stringSplit(c *call, args []any) (any, error) {
	s, err := wantString(c, args, 0)
	if err != nil {
		return nil, err
	}
	delims, err := wantString(c, args, 1)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(delims, r) }) {
		out = append(out, f)
	}
	return out, nil
}

func uuidFn(_ *call, _ []any) (any, error) { return uuid.NewString(), nil }

// javaRandom is java.util.Random's linear congruential generator.
type javaRandom struct{ seed int64 }

const (
	jrMult = 0x5DEECE66D
	jrAdd  = 0xB
	jrMask = (1 << 48) - 1
)

func newJavaRandom(seed int64) *javaRandom { return &javaRandom{seed: (seed ^ jrMult) & jrMask} }

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*jrMult + jrAdd) & jrMask
	return int32(uint64(r.seed) >> (48 - bits))
}

func (r *javaRandom) nextInt(bound int32) int32 {
	v := r.next(31)
	m := bound - 1
	if bound&m == 0 {
		return int32((int64(bound) * int64(v)) >> 31)
	}
	for u := v; ; u = r.next(31) {
		v = u % bound
		if u-v+m >= 0 { // int32 overflow here is Java's rejection test
			return v
		}
	}
}

func (r *javaRandom) nextLong() int64 {
	return int64(r.next(32))<<32 + int64(r.next(32))
}
