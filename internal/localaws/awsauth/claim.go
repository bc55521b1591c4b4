package awsauth

import (
	"crypto/hmac"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"sinew/internal/localaws/awsjson"
)

const (
	algorithm     = "AWS4-HMAC-SHA256"
	amzDateLayout = "20060102T150405Z"
	scopeLayout   = "20060102"
	terminator    = "aws4_request"
	maxExpires    = 7 * 24 * time.Hour
)

// claim is what a request says of its signature, from its Authorization header or its presigned
// URL's X-Amz-* parameters.
type claim struct {
	presigned     bool
	accessKeyID   string
	scopeDate     string // YYYYMMDD
	region        string
	service       string
	signedHeaders []string
	signature     string
	amzDate       string    // the request's time as the string to sign has it (ISO 8601 basic)
	at            time.Time // amzDate parsed
	expires       time.Duration
}

// parseClaim reads how r is signed; it checks form only, not the values against the Verifier.
func parseClaim(r *http.Request) (*claim, *authError) {
	q := r.URL.Query()
	presigned := q.Has("X-Amz-Algorithm") || q.Has("X-Amz-Credential") || q.Has("X-Amz-Signature")
	auth := r.Header.Values("Authorization")
	switch {
	case len(r.Header.Values("X-Amz-Security-Token")) > 0 || q.Has("X-Amz-Security-Token"):
		// Local mode issues no session tokens, so a token belongs to some other account.
		return nil, errorf(codeUnrecognized, "The security token included in the request is invalid.")
	case len(auth) > 0 && presigned:
		return nil, errorf(codeIncomplete, "Found both an Authorization header and X-Amz-* query parameters; sign one way only.")
	case len(auth) > 1:
		return nil, errorf(codeIncomplete, "Found more than one Authorization header.")
	case len(auth) == 1:
		return parseHeader(r, auth[0])
	case presigned:
		return parseQuery(r, q)
	}
	return nil, errorf(codeMissing, "Missing Authentication Token")
}

// parseHeader reads "AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...".
func parseHeader(r *http.Request, auth string) (*claim, *authError) {
	alg, rest, _ := strings.Cut(strings.TrimSpace(auth), " ")
	if alg != algorithm {
		return nil, errorf(codeIncomplete, "Unsupported AWS 'algorithm': %q; local mode accepts only %s.", awsjson.Clip(alg, 40), algorithm)
	}
	params := map[string]string{}
	for part := range strings.SplitSeq(rest, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, errorf(codeIncomplete, "Authorization header's components must be key=value pairs separated by commas.")
		}
		if _, dup := params[k]; dup {
			return nil, errorf(codeIncomplete, "Authorization header has '%s' more than once.", awsjson.Clip(k, 40))
		}
		params[k] = val
	}
	var missing []string
	for _, k := range []string{"Credential", "SignedHeaders", "Signature"} {
		if params[k] == "" {
			missing = append(missing, fmt.Sprintf("Authorization header requires '%s' parameter.", k))
		}
	}
	date, httpDate := r.Header.Get("X-Amz-Date"), false
	if date == "" {
		date, httpDate = r.Header.Get("Date"), true
	}
	if date == "" {
		missing = append(missing, "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
	}
	if len(missing) > 0 {
		return nil, errorf(codeIncomplete, "%s", strings.Join(missing, " "))
	}
	c := &claim{signature: params["Signature"]}
	return c, c.set(r, params["Credential"], params["SignedHeaders"], date, httpDate)
}

// queryParams are the parameters of a presigned URL, each required once.
var queryParams = []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"}

func parseQuery(r *http.Request, q url.Values) (*claim, *authError) {
	var missing []string
	for _, k := range queryParams {
		if len(q[k]) != 1 || q[k][0] == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, errorf(codeIncomplete, "AWS query-string authentication requires each of the parameters %s once; "+
			"missing or repeated: %s.", strings.Join(queryParams, ", "), strings.Join(missing, ", "))
	}
	if alg := q.Get("X-Amz-Algorithm"); alg != algorithm {
		return nil, errorf(codeIncomplete, "Unsupported AWS 'algorithm': %q; local mode accepts only %s.", awsjson.Clip(alg, 40), algorithm)
	}
	secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || secs < 1 || time.Duration(secs)*time.Second > maxExpires {
		return nil, errorf(codeIncomplete, "X-Amz-Expires must be a whole number of seconds from 1 to %d (7 days).", int(maxExpires.Seconds()))
	}
	c := &claim{presigned: true, signature: q.Get("X-Amz-Signature"), expires: time.Duration(secs) * time.Second}
	return c, c.set(r, q.Get("X-Amz-Credential"), q.Get("X-Amz-SignedHeaders"), q.Get("X-Amz-Date"), false)
}

// set fills c from the parts both forms share. It returns *authError, not error, so that a nil
// result compares equal to nil at the caller.
func (c *claim) set(r *http.Request, credential, signedHeaders, date string, httpDate bool) *authError {
	parts := strings.Split(credential, "/")
	if len(parts) != 5 || slices.Contains(parts, "") || parts[4] != terminator {
		return errorf(codeIncomplete, "Credential must have the form ACCESS_KEY_ID/YYYYMMDD/REGION/SERVICE/aws4_request.")
	}
	if _, err := time.Parse(scopeLayout, parts[1]); err != nil {
		return errorf(codeIncomplete, "Credential's date must be YYYYMMDD.")
	}
	c.accessKeyID, c.scopeDate, c.region, c.service = parts[0], parts[1], parts[2], parts[3]

	names := strings.Split(signedHeaders, ";")
	for i, n := range names {
		if n == "" || n != strings.ToLower(n) || (i > 0 && n <= names[i-1]) {
			return errorf(codeIncomplete, "SignedHeaders must be lowercase header names, sorted, separated by ';'.")
		}
	}
	if !slices.Contains(names, "host") {
		return errorf(codeIncomplete, "'Host' must be a 'SignedHeader' in the AWS Authorization.")
	}
	// The target names the operation: unsigned, it could be changed to run another one.
	if r.Header.Get("X-Amz-Target") != "" && !slices.Contains(names, "x-amz-target") {
		return errorf(codeIncomplete, "'X-Amz-Target' must be a 'SignedHeader' in the AWS Authorization.")
	}
	c.signedHeaders = names

	if httpDate {
		t, err := http.ParseTime(date)
		if err != nil {
			return errorf(codeIncomplete, "Date header must be an HTTP date.")
		}
		c.at = t.UTC()
		c.amzDate = c.at.Format(amzDateLayout)
		return nil
	}
	t, err := time.Parse(amzDateLayout, date)
	if err != nil {
		return errorf(codeIncomplete, "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\".")
	}
	c.at, c.amzDate = t, date
	return nil
}

// checkClaim checks the claim's key, scope and time against v.
func (v *Verifier) checkClaim(c *claim) *authError {
	if !hmac.Equal([]byte(c.accessKeyID), []byte(v.creds.AccessKeyID)) {
		return errorf(codeUnrecognized, "The security token included in the request is invalid.")
	}
	if c.region != v.region {
		return errorf(codeInvalid, "Credential should be scoped to a valid region, not '%s'; local mode's region is %s.", awsjson.Clip(c.region, 40), v.region)
	}
	if !slices.Contains(v.services, c.service) {
		return errorf(codeInvalid, "Credential should be scoped to correct service, not '%s'; this endpoint serves %s.",
			awsjson.Clip(c.service, 40), strings.Join(v.services, ", "))
	}
	if day := c.at.Format(scopeLayout); c.scopeDate != day {
		return errorf(codeInvalid, "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%s', from '%s'.",
			c.scopeDate, day, c.amzDate)
	}
	now := v.now().UTC()
	if late := now.Add(v.maxSkew); c.at.After(late) {
		return errorf(codeInvalid, "Signature not yet current: %s is still later than %s (%s + %s)",
			c.amzDate, late.Format(amzDateLayout), now.Format(amzDateLayout), minutes(v.maxSkew))
	}
	if c.presigned {
		if oldest := now.Add(-c.expires); c.at.Before(oldest) {
			return errorf(codeInvalid, "Signature expired: %s is now earlier than %s (%s - %d sec.)",
				c.amzDate, oldest.Format(amzDateLayout), now.Format(amzDateLayout), int(c.expires.Seconds()))
		}
		return nil
	}
	if oldest := now.Add(-v.maxSkew); c.at.Before(oldest) {
		return errorf(codeInvalid, "Signature expired: %s is now earlier than %s (%s - %s)",
			c.amzDate, oldest.Format(amzDateLayout), now.Format(amzDateLayout), minutes(v.maxSkew))
	}
	return nil
}

// minutes writes d as AWS's messages do ("5 min."), or as a Go duration when not whole minutes.
func minutes(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%d min.", int(d.Minutes()))
	}
	return d.String()
}
