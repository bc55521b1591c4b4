package jsonata

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// $formatInteger and $parseInteger: XPath's fn:format-integer pictures (decimal digit patterns with
// grouping separators, a/A letters, i/I roman numerals, w/W/Ww words, ;o ordinals).

var (
	fewWords     = []string{"Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Eleven", "Twelve", "Thirteen", "Fourteen", "Fifteen", "Sixteen", "Seventeen", "Eighteen", "Nineteen"}
	ordinalWords = []string{"Zeroth", "First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth", "Ninth", "Tenth", "Eleventh", "Twelfth", "Thirteenth", "Fourteenth", "Fifteenth", "Sixteenth", "Seventeenth", "Eighteenth", "Nineteenth"}
	decadeWords  = []string{"Twenty", "Thirty", "Forty", "Fifty", "Sixty", "Seventy", "Eighty", "Ninety", "Hundred"}
	magnitudes   = []string{"Thousand", "Million", "Billion", "Trillion"}
	wordValues   = map[string]float64{}
	wordsRE      *regexp.Regexp
)

func init() {
	for i, w := range fewWords {
		wordValues[strings.ToLower(w)] = float64(i)
	}
	for i, w := range ordinalWords {
		wordValues[strings.ToLower(w)] = float64(i)
	}
	for i, w := range decadeWords {
		lw := strings.ToLower(w)
		wordValues[lw] = float64((i + 2) * 10)
		wordValues[lw[:len(lw)-1]+"ieth"] = float64((i + 2) * 10)
	}
	wordValues["hundredth"] = 100
	for i, w := range magnitudes {
		lw := strings.ToLower(w)
		v := math.Pow(10, float64((i+1)*3))
		wordValues[lw], wordValues[lw+"th"] = v, v
	}
	words := make([]string, 0, len(wordValues)+2)
	for w := range wordValues {
		words = append(words, w)
	}
	// longest first, so that an alternation prefers "seventeen" to "seven"
	sort.Slice(words, func(i, j int) bool {
		return len(words[i]) > len(words[j]) || len(words[i]) == len(words[j]) && words[i] < words[j]
	})
	words = append(words, "and", `[\-, ]`)
	wordsRE = regexp.MustCompile(`(?:` + strings.Join(words, "|") + `)+`)
}

func numberToWords(v float64, ordinal bool) string {
	var lookup func(num float64, prev, ord bool) string
	lookup = func(num float64, prev, ord bool) string {
		words := ""
		switch {
		case num <= 19:
			if prev {
				words = " and "
			}
			if ord {
				words += ordinalWords[int(num)]
			} else {
				words += fewWords[int(num)]
			}
		case num < 100:
			tens, rem := math.Floor(num/10), math.Mod(num, 10)
			if prev {
				words = " and "
			}
			words += decadeWords[int(tens)-2]
			if rem > 0 {
				words += "-" + lookup(rem, false, ord)
			} else if ord {
				words = words[:len(words)-1] + "ieth"
			}
		case num < 1000:
			hundreds, rem := math.Floor(num/100), math.Mod(num, 100)
			if prev {
				words = ", "
			}
			words += fewWords[int(hundreds)] + " Hundred"
			if rem > 0 {
				words += lookup(rem, true, ord)
			} else if ord {
				words += "th"
			}
		default:
			mag := int(math.Floor(math.Log10(num) / 3))
			if mag > len(magnitudes) {
				mag = len(magnitudes)
			}
			factor := math.Pow(10, float64(mag*3))
			mant := math.Floor(num / factor)
			rem := num - mant*factor
			if prev {
				words = ", "
			}
			words += lookup(mant, false, false) + " " + magnitudes[mag-1]
			if rem > 0 {
				words += lookup(rem, true, ord)
			} else if ord {
				words += "th"
			}
		}
		return words
	}
	return lookup(v, false, ordinal)
}

var wordSplitRE = regexp.MustCompile(`,\s|\sand\s|[\s\\-]`)

func wordsToNumber(text string) float64 {
	segs := []float64{0}
	for _, part := range wordSplitRE.Split(text, -1) {
		v, ok := wordValues[part]
		if !ok {
			v = math.NaN()
		}
		top := segs[len(segs)-1]
		segs = segs[:len(segs)-1]
		if v < 100 {
			if top >= 1000 {
				segs = append(segs, top)
				top = 0
			}
			segs = append(segs, top+v)
		} else {
			segs = append(segs, top*v)
		}
	}
	total := 0.0
	for _, s := range segs {
		total += s
	}
	return total
}

var romanNumerals = []struct {
	v float64
	s string
}{{1000, "m"}, {900, "cm"}, {500, "d"}, {400, "cd"}, {100, "c"}, {90, "xc"}, {50, "l"}, {40, "xl"}, {10, "x"}, {9, "ix"}, {5, "v"}, {4, "iv"}, {1, "i"}}

// maxRoman bounds $formatInteger's roman numerals: each thousand is one more "m".
const maxRoman = 1e7

func decimalToRoman(v float64) string {
	var b strings.Builder
	for _, n := range romanNumerals {
		for v >= n.v {
			b.WriteString(n.s)
			v -= n.v
		}
	}
	return b.String()
}

func romanToDecimal(s string) float64 {
	values := map[byte]float64{'M': 1000, 'D': 500, 'C': 100, 'L': 50, 'X': 10, 'V': 5, 'I': 1}
	dec, maxV := 0.0, 1.0
	for i := len(s) - 1; i >= 0; i-- {
		v := values[s[i]]
		if v < maxV {
			dec -= v
		} else {
			maxV = v
			dec += v
		}
	}
	return dec
}

func decimalToLetters(v float64, a rune) string {
	var out []rune
	for v > 0 {
		out = append([]rune{rune(math.Mod(v-1, 26)) + a}, out...)
		v = math.Floor((v - 1) / 26)
	}
	return string(out)
}

func lettersToDecimal(s string, a rune) float64 {
	dec := 0.0
	rs := []rune(s)
	for i := range rs {
		dec += float64(rs[len(rs)-i-1]-a+1) * math.Pow(26, float64(i))
	}
	return dec
}

type separator struct {
	position int
	char     string
}

type integerFormat struct {
	primary         string // decimal, letters, roman, words, sequence
	caseMode        string // upper, lower, title
	ordinal         bool
	zeroCode        rune
	mandatoryDigits int
	optionalDigits  int
	regular         bool
	regularSep      separator
	separators      []separator
	token           string
	n               int // parsing: the digits expected (0: any)
}

var decimalGroups = []rune{0x30, 0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10}

func digitGroup(r rune) (rune, bool) {
	for _, g := range decimalGroups {
		if r >= g && r <= g+9 {
			return g, true
		}
	}
	return 0, false
}

func analyseIntegerPicture(picture string) (*integerFormat, error) {
	f := &integerFormat{primary: "decimal", caseMode: "lower"}
	primary := picture
	if semi := strings.LastIndexByte(picture, ';'); semi >= 0 {
		primary = picture[:semi]
		if strings.HasPrefix(picture[semi+1:], "o") {
			f.ordinal = true
		}
	}
	switch primary {
	case "A":
		f.caseMode, f.primary = "upper", "letters"
	case "a":
		f.primary = "letters"
	case "I":
		f.caseMode, f.primary = "upper", "roman"
	case "i":
		f.primary = "roman"
	case "W":
		f.caseMode, f.primary = "upper", "words"
	case "Ww":
		f.caseMode, f.primary = "title", "words"
	case "w":
		f.primary = "words"
	default:
		return f, f.analyseDecimal(primary)
	}
	return f, nil
}

func (f *integerFormat) analyseDecimal(primary string) error {
	rs := []rune(primary)
	zero := rune(-1)
	pos := 0
	var seps []separator
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		if g, ok := digitGroup(r); ok {
			f.mandatoryDigits++
			pos++
			if zero < 0 {
				zero = g
			} else if g != zero {
				return &Error{Code: "D3131"}
			}
			continue
		}
		if r == '#' {
			pos++
			f.optionalDigits++
			continue
		}
		seps = append(seps, separator{position: pos, char: string(r)})
	}
	if f.mandatoryDigits == 0 {
		f.primary, f.token = "sequence", primary
		return nil
	}
	f.zeroCode = zero
	if reg := regularRepeat(seps); reg > 0 {
		f.regular, f.regularSep = true, separator{position: reg, char: seps[0].char}
	} else {
		f.separators = seps
	}
	return nil
}

func regularRepeat(seps []separator) int {
	if len(seps) == 0 {
		return 0
	}
	pos := make([]int, len(seps))
	for i, s := range seps {
		if s.char != seps[0].char {
			return 0
		}
		pos[i] = s.position
	}
	return regularGrouping(pos)
}

func formatIntegerWith(v float64, f *integerFormat) (string, error) {
	neg := v < 0
	v = math.Abs(v)
	var s string
	switch f.primary {
	case "letters":
		a := 'a'
		if f.caseMode == "upper" {
			a = 'A'
		}
		s = decimalToLetters(v, a)
	case "roman":
		if v > maxRoman {
			return "", &Error{Code: "U1001", Msg: "The number " + numberString(v) + " is too large to write in roman numerals"}
		}
		s = decimalToRoman(v)
		if f.caseMode == "upper" {
			s = strings.ToUpper(s)
		}
	case "words":
		s = numberToWords(v, f.ordinal)
		if f.caseMode == "upper" {
			s = strings.ToUpper(s)
		} else if f.caseMode == "lower" {
			s = strings.ToLower(s)
		}
	case "decimal":
		s = f.formatDecimal(v)
	case "sequence":
		return "", &Error{Code: "D3130", Value: f.token}
	}
	if neg {
		s = "-" + s
	}
	return s, nil
}

func (f *integerFormat) formatDecimal(v float64) string {
	s := numberString(v)
	if pad := f.mandatoryDigits - len(s); pad > 0 {
		s = strings.Repeat("0", pad) + s
	}
	if f.zeroCode != '0' {
		rs := []rune(s)
		for i, r := range rs {
			rs[i] = r + f.zeroCode - '0'
		}
		s = string(rs)
	}
	rs := []rune(s)
	if f.regular {
		n := (len(rs) - 1) / f.regularSep.position
		for i := n; i > 0; i-- {
			p := len(rs) - i*f.regularSep.position
			rs = append(rs[:p:p], append([]rune(f.regularSep.char), rs[p:]...)...)
		}
	} else {
		for i := len(f.separators) - 1; i >= 0; i-- {
			sep := f.separators[i]
			p := len(rs) - sep.position
			if p < 0 {
				p = 0
			}
			rs = append(rs[:p:p], append([]rune(sep.char), rs[p:]...)...)
		}
	}
	s = string(rs)
	if f.ordinal {
		suffix := map[byte]string{'1': "st", '2': "nd", '3': "rd"}[s[len(s)-1]]
		if suffix == "" || (len(s) > 1 && s[len(s)-2] == '1') {
			suffix = "th"
		}
		s += suffix
	}
	return s
}

// integerMatcher is the regular expression and parser of an integer picture, for $parseInteger
// and $toMillis.
func (f *integerFormat) matcher() (string, func(string) (any, error), error) {
	occurrences := "+"
	if f.n > 0 {
		if f.optionalDigits == 0 {
			occurrences = "{" + strconv.Itoa(f.n) + "}"
		} else {
			occurrences = "{" + strconv.Itoa(f.n-f.optionalDigits) + "," + strconv.Itoa(f.n) + "}"
		}
	}
	upper := f.caseMode == "upper"
	switch f.primary {
	case "letters":
		a, re := 'a', "[a-z]+"
		if upper {
			a, re = 'A', "[A-Z]+"
		}
		return re, func(s string) (any, error) { return lettersToDecimal(s, a), nil }, nil
	case "roman":
		re := "[mdclxvi]+"
		if upper {
			re = "[MDCLXVI]+"
		}
		return re, func(s string) (any, error) { return romanToDecimal(strings.ToUpper(s)), nil }, nil
	case "words":
		return wordsRE.String(), func(s string) (any, error) { return wordsToNumber(strings.ToLower(s)), nil }, nil
	case "decimal":
		re := "[0-9]" + occurrences
		if f.ordinal {
			re += "(?:th|st|nd|rd)"
		}
		return re, f.parseDecimal, nil
	}
	return "", nil, &Error{Code: "D3130", Value: f.token}
}

func (f *integerFormat) parseDecimal(s string) (any, error) {
	digits := s
	if f.ordinal && len(digits) >= 2 {
		digits = digits[:len(digits)-2]
	}
	if f.regular {
		digits = strings.ReplaceAll(digits, ",", "")
	} else {
		for _, sep := range f.separators {
			digits = strings.ReplaceAll(digits, sep.char, "")
		}
	}
	if f.zeroCode != '0' {
		rs := []rune(digits)
		for i, r := range rs {
			rs[i] = r - f.zeroCode + '0'
		}
		digits = string(rs)
	}
	n, size := leadingInt(digits)
	if size == 0 {
		return math.NaN(), nil
	}
	if size > 15 {
		f, _ := strconv.ParseFloat(digits[:size], 64)
		return f, nil
	}
	return float64(n), nil
}

func defineIntegers() {
	define("formatInteger", "<n-s:s>", 2, func(_ *evaluator, _ *call, a []any) (any, error) {
		v, ok := a[0].(float64)
		if !ok {
			return nil, nil
		}
		f, err := analyseIntegerPicture(a[1].(string))
		if err != nil {
			return nil, err
		}
		return formatIntegerWith(math.Floor(v), f)
	})
	define("parseInteger", "<s-s:n>", 2, func(_ *evaluator, _ *call, a []any) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return nil, nil
		}
		f, err := analyseIntegerPicture(a[1].(string))
		if err != nil {
			return nil, err
		}
		_, parse, err := f.matcher()
		if err != nil {
			return nil, err
		}
		return parse(s)
	})
}
