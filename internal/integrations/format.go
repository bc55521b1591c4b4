package integrations

import (
	"net/mail"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// formatCheckers assert the JSON Schema formats sinew asserts (its reflected schemas use uri; a
// client's tool schema may use the others). The validator treats "format" as an annotation, so the
// check is sinew's; an unknown format stays an annotation, as the specification allows.
var formatCheckers = map[string]func(string) bool{
	"uri":           isURI,
	"uri-reference": isURIReference,
	"email":         isEmail,
	"date-time":     isDateTime,
	"date":          isDate,
	"time":          isTime,
	"uuid":          isUUID,
	"ipv4":          isIPv4,
	"ipv6":          isIPv6,
}

// validFormat reports whether s is a valid instance of format; an unknown format accepts anything.
func validFormat(format, s string) bool {
	check, ok := formatCheckers[format]
	return !ok || check(s)
}

// isURI accepts an absolute URI (RFC 3986: a scheme, then the rest) with no spaces.
func isURI(s string) bool {
	if strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.IsAbs()
}

// isURIReference accepts a URI or a relative reference.
func isURIReference(s string) bool {
	if strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	_, err := url.Parse(s)
	return err == nil
}

// isEmail accepts a bare RFC 5322 address (no display name, no angle brackets).
func isEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

// isDateTime accepts an RFC 3339 date-time; the letters T and Z may be lower case (RFC 3339 5.6).
func isDateTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s))
	return err == nil
}

// isDate accepts an RFC 3339 full-date.
func isDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// isTime accepts an RFC 3339 full-time: a partial time with a Z or numeric offset.
func isTime(s string) bool {
	_, err := time.Parse("15:04:05.999999999Z07:00", strings.ToUpper(s))
	return err == nil
}

// isUUID accepts the 8-4-4-4-12 hexadecimal form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// isIPv4 accepts a dotted-quad address (netip refuses leading zeros, as RFC 2673 does).
func isIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

// isIPv6 accepts an IPv6 address without a zone.
func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && a.Zone() == ""
}
