// Package awsauth verifies AWS Signature Version 4 on local mode's AWS endpoints against
// credentials local mode makes for its data directory.
//
// Without it any process on the machine, or any web page the developer opens, could call local
// mode's Step Functions, Lambda, KMS, EventBridge and DynamoDB endpoints as that developer. With it
// a request must be signed with the key in the data directory's aws-credentials.json (0600), as
// the AWS SDKs and CLI sign for AWS, and errors come back in the shape those clients parse.
package awsauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"sinew/internal/localaws/awsrouter"
)

// Options configure a Verifier.
type Options struct {
	Region   string           // the only region accepted in a credential scope; empty: us-east-1
	Services []string         // signing names accepted; empty: states, lambda, kms, events, dynamodb
	Now      func() time.Time // nil: time.Now
	MaxSkew  time.Duration    // 0: 5 minutes, as AWS
	MaxBody  int64            // 0: 32 MiB; a larger body is refused rather than hashed
	Logger   *slog.Logger     // refusals are logged at Info; nil: slog.Default()
}

// Verifier checks requests' signatures. It is safe for concurrent use.
type Verifier struct {
	creds    Credentials
	region   string
	services []string
	now      func() time.Time
	maxSkew  time.Duration
	maxBody  int64
	log      *slog.Logger
}

// New makes a Verifier accepting requests signed with c.
func New(c Credentials, o Options) *Verifier {
	v := &Verifier{
		creds:    c,
		region:   o.Region,
		services: slices.Clone(o.Services),
		now:      o.Now,
		maxSkew:  o.MaxSkew,
		maxBody:  o.MaxBody,
		log:      o.Logger,
	}
	if v.region == "" {
		v.region = "us-east-1"
	}
	if len(v.services) == 0 {
		v.services = []string{awsrouter.StepFunctions, awsrouter.Lambda, awsrouter.KMS, awsrouter.EventBridge, awsrouter.DynamoDB}
	}
	if v.now == nil {
		v.now = time.Now
	}
	if v.maxSkew <= 0 {
		v.maxSkew = 5 * time.Minute
	}
	if v.maxBody <= 0 {
		v.maxBody = 32 << 20
	}
	if v.log == nil {
		v.log = slog.Default()
	}
	return v
}

// Wrap passes on only requests signed with the Verifier's credentials, with r.Body replaced by the
// bytes it read to check the signature; others are answered with AWS's error for the failure.
func (v *Verifier) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, aerr := v.verify(w, r)
		if aerr != nil {
			v.refuse(w, r, aerr)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// verify runs the checks cheapest first, so a request that fails before its signature is compared
// has its body left unread.
func (v *Verifier) verify(w http.ResponseWriter, r *http.Request) ([]byte, *authError) {
	if aerr := refusedMediaType(r); aerr != nil {
		return nil, aerr
	}
	c, aerr := parseClaim(r)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := v.checkClaim(c); aerr != nil {
		return nil, aerr
	}
	body, aerr := v.readBody(w, r)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := v.checkSignature(r, c, body); aerr != nil {
		return nil, aerr
	}
	return body, nil
}

// Error codes, as AWS's front end answers them.
const (
	codeMissing      = "MissingAuthenticationTokenException"
	codeIncomplete   = "IncompleteSignatureException"
	codeUnrecognized = "UnrecognizedClientException"
	codeInvalid      = "InvalidSignatureException"
	codeMediaType    = "UnsupportedMediaTypeException"
	codeTooLarge     = "RequestTooLargeException"
)

// authError is a refusal. Its message must never carry the secret or the expected signature.
type authError struct {
	status  int // 0: the protocol's status for an authentication failure (400, or Lambda's 403)
	code    string
	message string
}

func errorf(code, format string, args ...any) *authError {
	return &authError{code: code, message: fmt.Sprintf(format, args...)}
}

// preflightFree are the media types a browser sends to any address without asking the server
// first (a CORS "simple request"); no AWS client of these services uses them.
var preflightFree = []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"}

// refusedMediaType refuses a body a web page could have sent: such a request is never signed, but
// refusing it before anything else keeps a page from reaching any code past this point.
func refusedMediaType(r *http.Request) *authError {
	for _, ct := range r.Header.Values("Content-Type") {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil {
			before, _, _ := strings.Cut(ct, ";")
			mt = strings.ToLower(strings.TrimSpace(before))
		}
		if slices.Contains(preflightFree, mt) {
			return &authError{
				status: http.StatusUnsupportedMediaType,
				code:   codeMediaType,
				message: fmt.Sprintf("local mode refuses requests with Content-Type %s, because a web page can send that "+
					"content type to any address without the browser asking first; AWS clients never send it", mt),
			}
		}
	}
	return nil
}

func (v *Verifier) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *authError) {
	tooLarge := &authError{
		status:  http.StatusRequestEntityTooLarge,
		code:    codeTooLarge,
		message: fmt.Sprintf("Request must be smaller than %d bytes for local mode's AWS endpoints", v.maxBody),
	}
	if r.ContentLength > v.maxBody {
		return nil, tooLarge
	}
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, v.maxBody))
	if err != nil {
		var max *http.MaxBytesError
		if errors.As(err, &max) {
			return nil, tooLarge
		}
		return nil, errorf(codeIncomplete, "could not read the request body to check its signature")
	}
	return body, nil
}

// refuse answers e in the protocol of the service the request is for, so the SDKs and CLI show its
// code and message.
func (v *Verifier) refuse(w http.ResponseWriter, r *http.Request, e *authError) {
	svc := awsrouter.Service(r)
	if svc == "" {
		svc = v.services[0]
	}
	status := e.status
	var body any
	if svc == awsrouter.Lambda {
		// Lambda's REST protocol: the code in the header, 403 for authentication failures.
		if status == 0 {
			status = http.StatusForbidden
		}
		w.Header().Set("Content-Type", "application/json")
		body = struct {
			Type    string `json:"Type"`
			Message string `json:"message"`
		}{"User", e.message}
	} else {
		if status == 0 {
			status = http.StatusBadRequest
		}
		ct := "application/x-amz-json-1.0"
		if svc == awsrouter.KMS || svc == awsrouter.EventBridge {
			ct = "application/x-amz-json-1.1"
		}
		w.Header().Set("Content-Type", ct)
		body = struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		}{e.code, e.message}
	}
	data, _ := json.Marshal(body) // two strings: cannot fail
	w.Header().Set("X-Amzn-ErrorType", e.code)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	_, _ = w.Write(data)
	v.log.Info("aws request refused", "service", svc, "status", status, "error_type", e.code,
		"message", e.message, "remote", r.RemoteAddr)
}
