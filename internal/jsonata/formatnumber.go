package jsonata

import (
	"math"
	"strconv"
	"strings"
)

// $formatNumber: an XPath/XSLT 3.0 decimal-format picture (fn:format-number), with JSONata's
// choices where the specification leaves room.

type decimalFormat struct {
	decimal, grouping, exponent, minus, percent, permille, zero, digit, pattern rune
}

func (f *decimalFormat) isDigit(r rune) bool { return r >= f.zero && r < f.zero+10 }

func (f *decimalFormat) isActive(r rune) bool {
	return f.isDigit(r) || r == f.decimal || r == f.exponent || r == f.grouping || r == f.digit || r == f.pattern
}

func newDecimalFormat(opts *Object) *decimalFormat {
	f := &decimalFormat{decimal: '.', grouping: ',', exponent: 'e', minus: '-', percent: '%', permille: '\u2030', zero: '0', digit: '#', pattern: ';'}
	if opts != nil {
		set := func(key string, dst *rune) {
			if v, ok := opts.vals[key].(string); ok && v != "" {
				*dst = []rune(v)[0]
			}
		}
		set("decimal-separator", &f.decimal)
		set("grouping-separator", &f.grouping)
		set("exponent-separator", &f.exponent)
		set("minus-sign", &f.minus)
		set("percent", &f.percent)
		set("per-mille", &f.permille)
		set("zero-digit", &f.zero)
		set("digit", &f.digit)
		set("pattern-separator", &f.pattern)
	}
	return f
}

type subPicture struct {
	prefix, suffix, active, mantissa, integer, fraction []rune
	exponent                                            []rune
	hasExponent                                         bool
	picture                                             []rune
}

func (f *decimalFormat) split(pic []rune) subPicture {
	p := subPicture{picture: pic}
	start, end := len(pic), len(pic)
	for i, r := range pic {
		if f.isActive(r) && r != f.exponent {
			start = i
			break
		}
	}
	for i := len(pic) - 1; i >= 0; i-- {
		if f.isActive(pic[i]) && pic[i] != f.exponent {
			end = i + 1
			break
		}
	}
	if start > end {
		end = start
	}
	p.prefix, p.suffix, p.active = pic[:start], pic[end:], pic[start:end]
	ePos := indexRune(pic[start:], f.exponent)
	if ePos >= 0 {
		ePos += start
	}
	if ePos < 0 || ePos > len(pic)-len(p.suffix) {
		p.mantissa = p.active
	} else {
		rel := ePos - start
		p.mantissa, p.exponent, p.hasExponent = p.active[:rel], p.active[rel+1:], true
	}
	if d := indexRune(p.mantissa, f.decimal); d < 0 {
		p.integer, p.fraction = p.mantissa, p.suffix
	} else {
		p.integer, p.fraction = p.mantissa[:d], p.mantissa[d+1:]
	}
	return p
}

func indexRune(rs []rune, r rune) int {
	for i, x := range rs {
		if x == r {
			return i
		}
	}
	return -1
}

func lastIndexRune(rs []rune, r rune) int {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i] == r {
			return i
		}
	}
	return -1
}

func countRunes(rs []rune, pred func(rune) bool) int {
	n := 0
	for _, r := range rs {
		if pred(r) {
			n++
		}
	}
	return n
}

func (f *decimalFormat) validate(p subPicture) error {
	code := ""
	pic := p.picture
	dp := indexRune(pic, f.decimal)
	if dp != lastIndexRune(pic, f.decimal) {
		code = "D3081"
	}
	if indexRune(pic, f.percent) != lastIndexRune(pic, f.percent) {
		code = "D3082"
	}
	if indexRune(pic, f.permille) != lastIndexRune(pic, f.permille) {
		code = "D3083"
	}
	if indexRune(pic, f.percent) >= 0 && indexRune(pic, f.permille) >= 0 {
		code = "D3084"
	}
	if countRunes(p.mantissa, func(r rune) bool { return f.isDigit(r) || r == f.digit }) == 0 {
		code = "D3085"
	}
	if countRunes(p.active, func(r rune) bool { return !f.isActive(r) }) > 0 {
		code = "D3086"
	}
	if dp >= 0 {
		if (dp > 0 && pic[dp-1] == f.grouping) || (dp+1 < len(pic) && pic[dp+1] == f.grouping) {
			code = "D3087"
		}
	} else if n := len(p.integer); n > 0 && p.integer[n-1] == f.grouping {
		code = "D3088"
	}
	if strings.Contains(string(pic), string([]rune{f.grouping, f.grouping})) {
		code = "D3089"
	}
	if od := indexRune(p.integer, f.digit); od >= 0 && countRunes(p.integer[:od], f.isDigit) > 0 {
		code = "D3090"
	}
	if od := lastIndexRune(p.fraction, f.digit); od >= 0 && countRunes(p.fraction[od:], f.isDigit) > 0 {
		code = "D3091"
	}
	if p.hasExponent && len(p.exponent) > 0 && (indexRune(pic, f.percent) >= 0 || indexRune(pic, f.permille) >= 0) {
		code = "D3092"
	}
	if p.hasExponent && (len(p.exponent) == 0 || countRunes(p.exponent, func(r rune) bool { return !f.isDigit(r) }) > 0) {
		code = "D3093"
	}
	if code != "" {
		return &Error{Code: code}
	}
	return nil
}

type pictureVars struct {
	groupPositions   []int
	regularGrouping  int
	minInt, scaling  int
	fracGroups       []int
	minFrac, maxFrac int
	minExp           int
	prefix, suffix   []rune
	picture          []rune
	hasExponent      bool
}

func (f *decimalFormat) groupingPositions(part []rune, toLeft bool) []int {
	var out []int
	isD := func(r rune) bool { return f.isDigit(r) || r == f.digit }
	for i, r := range part {
		if r != f.grouping {
			continue
		}
		if toLeft {
			out = append(out, countRunes(part[:i], isD))
		} else {
			out = append(out, countRunes(part[i:], isD))
		}
	}
	return out
}

func regularGrouping(pos []int) int {
	if len(pos) == 0 {
		return 0
	}
	gcd := func(a, b int) int {
		for b != 0 {
			a, b = b, a%b
		}
		return a
	}
	factor := pos[0]
	for _, p := range pos[1:] {
		factor = gcd(factor, p)
	}
	for i := 1; i <= len(pos); i++ {
		found := false
		for _, p := range pos {
			if p == i*factor {
				found = true
			}
		}
		if !found {
			return 0
		}
	}
	return factor
}

func (f *decimalFormat) analyse(p subPicture) pictureVars {
	v := pictureVars{prefix: p.prefix, suffix: p.suffix, picture: p.picture, hasExponent: p.hasExponent}
	v.groupPositions = f.groupingPositions(p.integer, false)
	v.regularGrouping = regularGrouping(v.groupPositions)
	v.fracGroups = f.groupingPositions(p.fraction, true)
	v.minInt = countRunes(p.integer, f.isDigit)
	v.scaling = v.minInt
	v.minFrac = countRunes(p.fraction, f.isDigit)
	v.maxFrac = countRunes(p.fraction, func(r rune) bool { return f.isDigit(r) || r == f.digit })
	if v.minInt == 0 && v.maxFrac == 0 {
		if p.hasExponent {
			v.minFrac, v.maxFrac = 1, 1
		} else {
			v.minInt = 1
		}
	}
	if p.hasExponent && v.minInt == 0 && indexRune(p.integer, f.digit) >= 0 {
		v.minInt = 1
	}
	if v.minInt == 0 && v.minFrac == 0 {
		v.minFrac = 1
	}
	if p.hasExponent {
		v.minExp = countRunes(p.exponent, f.isDigit)
	}
	return v
}

func fnFormatNumber(_ *evaluator, _ *call, a []any) (any, error) {
	value, ok := a[0].(float64)
	if !ok {
		return nil, nil
	}
	if math.IsInf(value, 0) || math.IsNaN(value) {
		return nil, &Error{Code: "D1001", Value: value}
	}
	opts, _ := arg(a, 2).(*Object)
	f := newDecimalFormat(opts)
	subs := strings.Split(a[1].(string), string(f.pattern))
	if len(subs) > 2 {
		return nil, &Error{Code: "D3080"}
	}
	var vars []pictureVars
	for _, s := range subs {
		p := f.split([]rune(s))
		if err := f.validate(p); err != nil {
			return nil, err
		}
		vars = append(vars, f.analyse(p))
	}
	if len(vars) == 1 {
		neg := vars[0]
		neg.prefix = append([]rune{f.minus}, neg.prefix...)
		vars = append(vars, neg)
	}
	pic := vars[0]
	if value < 0 {
		pic = vars[1]
	}
	return f.format(value, pic), nil
}

func (f *decimalFormat) format(value float64, pic pictureVars) string {
	adjusted := value
	if indexRune(pic.picture, f.percent) >= 0 {
		adjusted = value * 100
	} else if indexRune(pic.picture, f.permille) >= 0 {
		adjusted = value * 1000
	}
	mantissa, exponent := adjusted, 0
	if pic.minExp != 0 {
		maxM := math.Pow(10, float64(pic.scaling))
		minM := math.Pow(10, float64(pic.scaling-1))
		// zero has no exponent that brings it into range: it stays 0e0 (JSONata would loop forever)
		for mantissa != 0 && mantissa < minM {
			mantissa *= 10
			exponent--
		}
		for mantissa > maxM {
			mantissa /= 10
			exponent++
		}
	}
	rounded := roundHalfEven(mantissa, pic.maxFrac)
	s := []rune(f.localDigits(strconv.FormatFloat(math.Abs(rounded), 'f', pic.maxFrac, 64)))
	if d := indexRune(s, '.'); d < 0 {
		s = append(s, f.decimal)
	} else {
		s[d] = f.decimal
	}
	for len(s) > 0 && s[0] == f.zero {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == f.zero {
		s = s[:len(s)-1]
	}
	dp := indexRune(s, f.decimal)
	if padLeft := pic.minInt - dp; padLeft > 0 {
		s = append([]rune(strings.Repeat(string(f.zero), padLeft)), s...)
	}
	dp = indexRune(s, f.decimal)
	if padRight := pic.minFrac - (len(s) - dp - 1); padRight > 0 {
		s = append(s, []rune(strings.Repeat(string(f.zero), padRight))...)
	}
	s = f.group(s, pic)
	dp = indexRune(s, f.decimal)
	if indexRune(pic.picture, f.decimal) < 0 || dp == len(s)-1 {
		s = s[:len(s)-1]
	}
	out := string(pic.prefix) + string(s)
	if pic.minExp != 0 {
		e := f.localDigits(strconv.Itoa(abs(exponent)))
		if pad := pic.minExp - len([]rune(e)); pad > 0 {
			e = strings.Repeat(string(f.zero), pad) + e
		}
		out += string(f.exponent)
		if exponent < 0 {
			out += string(f.minus)
		}
		out += e
	}
	return out + string(pic.suffix)
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

func (f *decimalFormat) localDigits(s string) string {
	if f.zero == '0' {
		return s
	}
	rs := []rune(s)
	for i, r := range rs {
		if r >= '0' && r <= '9' {
			rs[i] = f.zero + (r - '0')
		}
	}
	return string(rs)
}

func insertRune(s []rune, at int, r rune) []rune {
	out := make([]rune, 0, len(s)+1)
	out = append(out, s[:at]...)
	out = append(out, r)
	return append(out, s[at:]...)
}

func (f *decimalFormat) group(s []rune, pic pictureVars) []rune {
	dp := indexRune(s, f.decimal)
	if pic.regularGrouping > 0 {
		n := (dp - 1) / pic.regularGrouping
		for g := 1; g <= n; g++ {
			s = insertRune(s, dp-g*pic.regularGrouping, f.grouping)
		}
	} else {
		for _, pos := range pic.groupPositions {
			if at := dp - pos; at >= 0 && at <= len(s) {
				s = insertRune(s, at, f.grouping)
				dp++
			}
		}
	}
	dp = indexRune(s, f.decimal)
	for _, pos := range pic.fracGroups {
		if at := pos + dp + 1; at <= len(s) {
			s = insertRune(s, at, f.grouping)
		}
	}
	return s
}
