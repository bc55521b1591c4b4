package jsonata

import (
	"math"
	"regexp"
	"strings"
	"time"
)

type dtParser struct {
	regex     string
	component byte
	parse     func(string) (any, error)
}

func zoneParser(p *dtMarker) dtParser {
	sep := ""
	if p.intFormat.regular {
		sep = p.intFormat.regularSep.char
	}
	re := ""
	if p.component == 'z' {
		re = "GMT"
	}
	re += `[-+][0-9]+`
	if sep != "" {
		re += regexp.QuoteMeta(sep) + `[0-9]+`
	}
	return dtParser{regex: re, component: p.component, parse: func(v string) (any, error) {
		if p.component == 'z' && len(v) >= 3 {
			v = v[3:]
		}
		h, m := 0, 0
		if sep != "" {
			i := strings.Index(v, sep)
			h, _ = leadingSignedInt(v[:i])
			m, _ = leadingSignedInt(v[i+len(sep):])
		} else if len(v)-1 <= 2 {
			h, _ = leadingSignedInt(v)
		} else {
			h, _ = leadingSignedInt(v[:3])
			m, _ = leadingSignedInt(v[3:])
		}
		return float64(h*60 + m), nil
	}}
}

func nameParser(p *dtMarker) (dtParser, error) {
	lookup := map[string]float64{}
	add := func(names []string, from int, offset int) {
		for i, name := range names {
			if i < from {
				continue
			}
			if p.maxWidth > 0 && len(name) > p.maxWidth {
				name = name[:p.maxWidth]
			}
			lookup[strings.ToLower(name)] = float64(i + offset)
		}
	}
	switch p.component {
	case 'M', 'x':
		add(monthNames, 0, 1)
	case 'F':
		add(dayNames, 1, 0)
	case 'P':
		lookup = map[string]float64{"am": 0, "pm": 1}
	default:
		return dtParser{}, &Error{Code: "D3133", Value: string(p.component)}
	}
	return dtParser{regex: `[a-zA-Z]+`, component: p.component, parse: func(v string) (any, error) {
		if n, ok := lookup[strings.ToLower(v)]; ok {
			return n, nil
		}
		return nil, nil
	}}, nil
}

func dateTimeParsers(parts []dtMarker) ([]dtParser, error) {
	var out []dtParser
	for i := range parts {
		p := &parts[i]
		switch {
		case p.isLiteral:
			out = append(out, dtParser{regex: regexp.QuoteMeta(p.literal)})
		case p.component == 'Z' || p.component == 'z':
			out = append(out, zoneParser(p))
		case p.intFormat != nil:
			f := *p.intFormat
			f.n = max(p.n, 0)
			re, parse, err := f.matcher()
			if err != nil {
				return nil, err
			}
			out = append(out, dtParser{regex: re, component: p.component, parse: parse})
		default:
			np, err := nameParser(p)
			if err != nil {
				return nil, err
			}
			out = append(out, np)
		}
	}
	return out, nil
}

// parseDateTime is $toMillis with a picture.
func (ev *evaluator) parseDateTime(s, picture string) (any, error) {
	parts, err := analyseDateTimePicture(picture)
	if err != nil {
		return nil, err
	}
	parsers, err := dateTimeParsers(parts)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("(?i)^")
	for _, p := range parsers {
		b.WriteString("(" + p.regex + ")")
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, &Error{Code: "D3136"}
	}
	m := re.FindStringSubmatch(s)
	if m == nil {
		return nil, nil
	}
	comps := map[byte]float64{}
	for i, p := range parsers {
		if p.parse == nil {
			continue
		}
		v, err := p.parse(m[i+1])
		if err != nil {
			return nil, err
		}
		if f, ok := v.(float64); ok {
			comps[p.component] = f
		}
	}
	if len(comps) == 0 {
		return nil, nil
	}
	return ev.millisFromComponents(comps)
}

func componentMask(comps map[byte]float64, order string) int {
	mask := 0
	for i := 0; i < len(order); i++ {
		mask <<= 1
		if v, ok := comps[order[i]]; ok && v != 0 {
			mask++
		}
	}
	return mask
}

func isMaskType(t, mask int) bool { return ^t&mask == 0 && t&mask != 0 }

func (ev *evaluator) millisFromComponents(comps map[byte]float64) (any, error) {
	mask := componentMask(comps, "YXMxWwdD")
	dateA := isMaskType(161, mask)
	dateB := !dateA && isMaskType(130, mask)
	dateC := isMaskType(84, mask)
	dateD := !dateC && isMaskType(72, mask)
	mask = componentMask(comps, "PHhmsf")
	timeA := isMaskType(23, mask)
	timeB := !timeA && isMaskType(47, mask)
	dateComps := "YMD"
	switch {
	case dateB:
		dateComps = "YD"
	case dateC:
		dateComps = "XxwF"
	case dateD:
		dateComps = "XWF"
	}
	timeComps := "Hmsf"
	if timeB {
		timeComps = "Phmsf"
	}
	now := ev.now.UTC()
	startSpecified, endSpecified := false, false
	for _, c := range []byte(dateComps + timeComps) {
		if _, ok := comps[c]; !ok {
			if startSpecified {
				if strings.IndexByte("MDd", c) >= 0 {
					comps[c] = 1
				} else {
					comps[c] = 0
				}
				endSpecified = true
			} else if f, ok := dateFragment(now, c).(float64); ok {
				comps[c] = f
			} else if c == 'P' {
				comps[c] = map[bool]float64{false: 0, true: 1}[now.Hour() >= 12]
			}
			continue
		}
		startSpecified = true
		if endSpecified {
			return nil, &Error{Code: "D3136"}
		}
	}
	if comps['M'] > 0 {
		comps['M']--
	} else {
		comps['M'] = 0
	}
	if dateB {
		d := time.UnixMilli(int64(utcMillis(int(comps['Y']), 0, 1) + (comps['d']-1)*millisInDay)).UTC()
		comps['M'], comps['D'] = float64(int(d.Month())-1), float64(d.Day())
	}
	if dateC || dateD {
		return nil, &Error{Code: "D3136"}
	}
	if timeB {
		h := comps['h']
		if h == 12 {
			h = 0
		}
		if comps['P'] == 1 {
			h += 12
		}
		comps['H'] = h
	}
	for _, v := range comps {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.NaN(), nil
		}
	}
	t := time.Date(int(comps['Y']), time.Month(int(comps['M'])+1), int(comps['D']), int(comps['H']), int(comps['m']), int(comps['s']), int(comps['f'])*1e6, time.UTC)
	ms := float64(t.UnixMilli())
	if z := comps['Z'] + comps['z']; z != 0 {
		ms -= z * 60 * 1000
	}
	return ms, nil
}
