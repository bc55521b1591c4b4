package jsonata

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Date/time: $now, $millis, $fromMillis and $toMillis with XPath fn:format-dateTime pictures
// ([Y0001]-[M01]-[D01] ...), in UTC or the given timezone offset (±HHMM).

type dtMarker struct {
	literal   string
	isLiteral bool
	component byte
	pres1     string
	pres2     string
	ordinal   bool
	names     string // upper, lower, title when the component is written as a name
	minWidth  int    // -1: none
	maxWidth  int    // -1: none
	intFormat *integerFormat
	n         int
}

var defaultPresentation = map[byte]string{'Y': "1", 'M': "1", 'D': "1", 'd': "1", 'F': "n", 'W': "1", 'w': "1", 'X': "1", 'x': "1", 'H': "1", 'h': "1", 'P': "n", 'm': "01", 's': "01", 'f': "1", 'Z': "01:01", 'z': "01:01", 'C': "n", 'E': "n"}

var spaceRE = regexp.MustCompile(`\s+`)

func analyseDateTimePicture(picture string) ([]dtMarker, error) {
	var parts []dtMarker
	addLiteral := func(s string) {
		if s != "" {
			parts = append(parts, dtMarker{isLiteral: true, literal: strings.ReplaceAll(s, "]]", "]")})
		}
	}
	start, pos := 0, 0
	for pos < len(picture) {
		if picture[pos] != '[' {
			pos++
			continue
		}
		if pos+1 < len(picture) && picture[pos+1] == '[' {
			addLiteral(picture[start:pos])
			parts = append(parts, dtMarker{isLiteral: true, literal: "["})
			pos += 2
			start = pos
			continue
		}
		addLiteral(picture[start:pos])
		end := strings.IndexByte(picture[pos:], ']')
		if end < 0 {
			return nil, &Error{Code: "D3135"}
		}
		m, err := parseMarker(spaceRE.ReplaceAllString(picture[pos+1:pos+end], ""))
		if err != nil {
			return nil, err
		}
		parts = append(parts, m)
		pos += end + 1
		start = pos
	}
	addLiteral(picture[start:])
	return parts, nil
}

func parseWidth(s string) int {
	if s == "" || s == "*" {
		return -1
	}
	n, size := leadingInt(s)
	if size == 0 {
		return -1
	}
	return n
}

func parseMarker(marker string) (dtMarker, error) {
	d := dtMarker{minWidth: -1, maxWidth: -1}
	if marker == "" {
		return d, &Error{Code: "D3132", Value: ""}
	}
	d.component = marker[0]
	pres := marker[1:]
	if comma := strings.LastIndexByte(marker, ','); comma >= 0 {
		width := marker[comma+1:]
		if dash := strings.IndexByte(width, '-'); dash < 0 {
			d.minWidth = parseWidth(width)
		} else {
			d.minWidth, d.maxWidth = parseWidth(width[:dash]), parseWidth(width[dash+1:])
		}
		pres = marker[1:comma]
	}
	switch {
	case len(pres) == 1:
		d.pres1 = pres
	case len(pres) > 1:
		last := pres[len(pres)-1]
		if strings.IndexByte("atco", last) >= 0 {
			d.pres2, d.ordinal, d.pres1 = string(last), last == 'o', pres[:len(pres)-1]
		} else {
			d.pres1 = pres
		}
	default:
		p, ok := defaultPresentation[d.component]
		if !ok {
			return d, &Error{Code: "D3132", Value: string(d.component)}
		}
		d.pres1 = p
	}
	return d, d.analysePresentation()
}

func (d *dtMarker) analysePresentation() error {
	switch {
	case d.pres1[0] == 'n':
		d.names = "lower"
	case d.pres1[0] == 'N':
		d.names = "upper"
		if len(d.pres1) > 1 && d.pres1[1] == 'n' {
			d.names = "title"
		}
	case strings.IndexByte("YMDdFWwXxHhmsf", d.component) >= 0:
		pattern := d.pres1
		if d.pres2 != "" {
			pattern += ";" + d.pres2
		}
		f, err := analyseIntegerPicture(pattern)
		if err != nil {
			return err
		}
		d.intFormat = f
		if d.minWidth >= 0 && f.mandatoryDigits < d.minWidth {
			f.mandatoryDigits = d.minWidth
		}
		if strings.IndexByte("YMD", d.component) >= 0 {
			d.n = -1
			if d.maxWidth >= 0 {
				d.n = d.maxWidth
				f.mandatoryDigits = d.n
			} else if w := f.mandatoryDigits + f.optionalDigits; w >= 2 {
				d.n = w
			}
		}
	}
	if d.component == 'Z' || d.component == 'z' {
		f, err := analyseIntegerPicture(d.pres1)
		if err != nil {
			return err
		}
		d.intFormat = f
	}
	return nil
}

var (
	dayNames   = []string{"", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

const millisInDay = 86400000

func utcMillis(y, m, d int) float64 {
	return float64(time.Date(y, time.Month(m+1), d, 0, 0, 0, 0, time.UTC).UnixMilli())
}

// startOfFirstWeek gives the start (a Monday) of the first week of the month m of year y, in
// the ISO manner: the week holding the month's first Thursday.
func startOfFirstWeek(y, m int) float64 {
	first := utcMillis(y, m, 1)
	dow := int(time.UnixMilli(int64(first)).UTC().Weekday())
	if dow == 0 {
		dow = 7
	}
	if dow > 4 {
		return first + float64(8-dow)*millisInDay
	}
	return first - float64(dow-1)*millisInDay
}

func nextMonth(y, m int) (int, int) {
	if m == 11 {
		return y + 1, 0
	}
	return y, m + 1
}

func prevMonth(y, m int) (int, int) {
	if m == 0 {
		return y - 1, 11
	}
	return y, m - 1
}

func deltaWeeks(start, end float64) float64 { return (end-start)/(millisInDay*7) + 1 }

func dateFragment(t time.Time, c byte) any {
	y, mo, d := t.Year(), int(t.Month())-1, t.Day()
	switch c {
	case 'Y':
		return float64(y)
	case 'M':
		return float64(mo + 1)
	case 'D':
		return float64(d)
	case 'd':
		return (utcMillis(y, mo, d)-utcMillis(y, 0, 1))/millisInDay + 1
	case 'F':
		wd := int(t.Weekday())
		if wd == 0 {
			wd = 7
		}
		return float64(wd)
	case 'W':
		start := startOfFirstWeek(y, 0)
		today := utcMillis(y, mo, d)
		week := deltaWeeks(start, today)
		if week > 52 {
			if today >= startOfFirstWeek(y+1, 0) {
				week = 1
			}
		} else if week < 1 {
			week = deltaWeeks(startOfFirstWeek(y-1, 0), today)
		}
		return math.Floor(week)
	case 'w':
		start := startOfFirstWeek(y, mo)
		today := utcMillis(y, mo, d)
		week := deltaWeeks(start, today)
		if week > 4 {
			if today >= startOfFirstWeek(nextMonth(y, mo)) {
				week = 1
			}
		} else if week < 1 {
			week = deltaWeeks(startOfFirstWeek(prevMonth(y, mo)), today)
		}
		return math.Floor(week)
	case 'X':
		now := float64(t.UnixMilli())
		switch {
		case now < startOfFirstWeek(y, 0):
			return float64(y - 1)
		case now >= startOfFirstWeek(y+1, 0):
			return float64(y + 1)
		}
		return float64(y)
	case 'x':
		now := float64(t.UnixMilli())
		ny, nm := nextMonth(y, mo)
		switch {
		case now < startOfFirstWeek(y, mo):
			_, pm := prevMonth(y, mo)
			return float64(pm + 1)
		case now >= startOfFirstWeek(ny, nm):
			return float64(nm + 1)
		}
		return float64(mo + 1)
	case 'H':
		return float64(t.Hour())
	case 'h':
		h := t.Hour() % 12
		if h == 0 {
			h = 12
		}
		return float64(h)
	case 'P':
		if t.Hour() >= 12 {
			return "pm"
		}
		return "am"
	case 'm':
		return float64(t.Minute())
	case 's':
		return float64(t.Second())
	case 'f':
		return float64(t.Nanosecond() / 1e6)
	case 'C', 'E':
		return "ISO"
	}
	return nil
}

var isoPicture, _ = analyseDateTimePicture("[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001][Z01:01t]")

func formatDateTime(millis float64, picture *string, timezone *string) (string, error) {
	offH, offM := 0, 0
	if timezone != nil {
		off, size := leadingSignedInt(*timezone)
		if size > 0 {
			offH = int(math.Floor(float64(off) / 100))
			offM = off % 100
		}
	}
	parts := isoPicture
	if picture != nil {
		var err error
		if parts, err = analyseDateTimePicture(*picture); err != nil {
			return "", err
		}
	}
	t := time.UnixMilli(int64(millis) + int64((60*offH+offM)*60*1000)).UTC()
	var b strings.Builder
	for i := range parts {
		p := &parts[i]
		if p.isLiteral {
			b.WriteString(p.literal)
			continue
		}
		s, err := formatComponent(t, p, offH, offM)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

func leadingSignedInt(s string) (int, int) {
	s = strings.TrimSpace(s)
	sign := 1
	k := 0
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		if s[0] == '-' {
			sign = -1
		}
		k = 1
	}
	n, size := leadingInt(s[k:])
	if size == 0 {
		return 0, 0
	}
	return sign * n, size + k
}

func formatComponent(t time.Time, p *dtMarker, offH, offM int) (string, error) {
	v := dateFragment(t, p.component)
	switch {
	case strings.IndexByte("YMDdFWwXxHhms", p.component) >= 0:
		f := v.(float64)
		if p.component == 'Y' && p.n != -1 {
			f = math.Mod(f, math.Pow(10, float64(p.n)))
		}
		if p.names != "" {
			return formatName(p, f)
		}
		return formatIntegerWith(f, p.intFormat)
	case p.component == 'f':
		return formatIntegerWith(v.(float64), p.intFormat)
	case p.component == 'Z' || p.component == 'z':
		return formatZone(p, offH, offM)
	case p.component == 'P':
		s := v.(string)
		if p.names == "upper" {
			s = strings.ToUpper(s)
		}
		return s, nil
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", nil
}

func formatName(p *dtMarker, f float64) (string, error) {
	var s string
	switch p.component {
	case 'M', 'x':
		s = monthNames[int(f)-1]
	case 'F':
		s = dayNames[int(f)]
	default:
		return "", &Error{Code: "D3133", Value: string(p.component)}
	}
	switch p.names {
	case "upper":
		s = strings.ToUpper(s)
	case "lower":
		s = strings.ToLower(s)
	}
	if p.maxWidth >= 0 && len(s) > p.maxWidth {
		s = s[:p.maxWidth]
	}
	return s, nil
}

func formatZone(p *dtMarker, offH, offM int) (string, error) {
	offset := offH*100 + offM
	var s string
	var err error
	if p.intFormat.regular {
		s, err = formatIntegerWith(float64(offset), p.intFormat)
	} else {
		switch n := p.intFormat.mandatoryDigits; {
		case n == 1 || n == 2:
			s, err = formatIntegerWith(float64(offH), p.intFormat)
			if offM != 0 {
				s += ":" + p.twoDigits(offM)
			}
		case n == 3 || n == 4:
			s, err = formatIntegerWith(float64(offset), p.intFormat)
		default:
			return "", &Error{Code: "D3134", Value: float64(n)}
		}
	}
	if err != nil {
		return "", err
	}
	if offset >= 0 {
		s = "+" + s
	}
	if p.component == 'z' {
		s = "GMT" + s
	}
	if offset == 0 && p.pres2 == "t" {
		s = "Z"
	}
	return s, nil
}

func (p *dtMarker) twoDigits(v int) string {
	s := strconv.Itoa(v)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}

func defineDateTime() {
	defineIntegers()
	define("fromMillis", "<n-s?s?:s>", 3, func(_ *evaluator, _ *call, a []any) (any, error) {
		ms, ok := a[0].(float64)
		if !ok {
			return nil, nil
		}
		return formatDateTime(ms, optString(a, 1), optString(a, 2))
	})
	define("toMillis", "<s-s?:n>", 2, func(ev *evaluator, _ *call, a []any) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return nil, nil
		}
		if pic := optString(a, 1); pic != nil {
			return ev.parseDateTime(s, *pic)
		}
		return parseISO(s)
	})
	define("now", "<s?s?:s>", 2, func(ev *evaluator, _ *call, a []any) (any, error) {
		return formatDateTime(float64(ev.now.UnixMilli()), optString(a, 0), optString(a, 1))
	})
	define("millis", "<:n>", 0, func(ev *evaluator, _ *call, _ []any) (any, error) {
		return float64(ev.now.UnixMilli()), nil
	})
}

func optString(a []any, i int) *string {
	if s, ok := arg(a, i).(string); ok {
		return &s
	}
	return nil
}

var (
	isoRE      = regexp.MustCompile(`^\d{4}(-[01]\d)*(-[0-3]\d)*(T[0-2]\d:[0-5]\d:[0-5]\d)*(\.\d+)?([+-][0-2]\d:?[0-5]\d|Z)?$`)
	isoPartsRE = regexp.MustCompile(`^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?(?:T(\d{2}):(\d{2})(?::(\d{2}))?(?:\.(\d+))?)?(Z|[+-]\d{2}:?\d{2})?$`)
)

// parseISO is $toMillis without a picture: an ISO 8601 timestamp, as JavaScript's Date.parse
// reads it (a time without an offset is taken as UTC here).
func parseISO(s string) (any, error) {
	if !isoRE.MatchString(s) {
		return nil, &Error{Code: "D3110", Value: s}
	}
	m := isoPartsRE.FindStringSubmatch(s)
	if m == nil {
		return math.NaN(), nil
	}
	num := func(x string, def int) int {
		if x == "" {
			return def
		}
		n, _ := strconv.Atoi(x)
		return n
	}
	frac := 0
	if m[7] != "" {
		f := (m[7] + "00")[:3]
		frac = num(f, 0)
	}
	mo, d, h, mi, sec := num(m[2], 1), num(m[3], 1), num(m[4], 0), num(m[5], 0), num(m[6], 0)
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 24 || mi > 59 || sec > 59 {
		return math.NaN(), nil
	}
	t := time.Date(num(m[1], 0), time.Month(mo), d, h, mi, sec, frac*1e6, time.UTC)
	if t.Day() != d {
		return math.NaN(), nil
	}
	ms := float64(t.UnixMilli())
	if z := m[8]; z != "" && z != "Z" {
		z = strings.ReplaceAll(z, ":", "")
		oh, om := num(z[1:3], 0), num(z[3:5], 0)
		off := float64((oh*60 + om) * 60000)
		if z[0] == '-' {
			off = -off
		}
		ms -= off
	}
	return ms, nil
}
