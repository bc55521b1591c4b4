// Package awsrouter serves several AWS APIs on one endpoint, as AWS_ENDPOINT_URL (one URL for every
// service) expects.
//
// Each request goes to the API it was signed for, read from its SigV4 credential scope
// (".../REGION/SERVICE/aws4_request", in the Authorization header or a presigned URL's
// X-Amz-Credential), else from its X-Amz-Target prefix, else from a Lambda API path.
package awsrouter

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Signing names of the services local mode serves (the SERVICE of a SigV4 credential scope).
const (
	StepFunctions = "states"
	Lambda        = "lambda"
	KMS           = "kms"
	EventBridge   = "events"
	DynamoDB      = "dynamodb"
)

// targetPrefixes map the X-Amz-Target prefixes of the JSON protocols to signing names, for
// requests without a SigV4 signature.
var targetPrefixes = map[string]string{
	"AWSStepFunctions.":         StepFunctions,
	"TrentService.":             KMS,
	"AWSEvents.":                EventBridge,
	"DynamoDB_20120810.":        DynamoDB,
	"DynamoDBStreams_20120810.": DynamoDB,
}

// Service is the signing name r is for, or "" when nothing in it names one.
func Service(r *http.Request) string {
	if s := scopeService(r.Header.Get("Authorization")); s != "" {
		return s
	}
	if s := scopeService("Credential=" + r.URL.Query().Get("X-Amz-Credential")); s != "" {
		return s
	}
	target := r.Header.Get("X-Amz-Target")
	for p, s := range targetPrefixes {
		if strings.HasPrefix(target, p) {
			return s
		}
	}
	// The Lambda API is REST: its paths start with its version date.
	if strings.HasPrefix(r.URL.Path, "/2015-03-31/") {
		return Lambda
	}
	return ""
}

// scopeService reads SERVICE from "... Credential=AKID/DATE/REGION/SERVICE/aws4_request, ...".
func scopeService(auth string) string {
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	cred, _, _ = strings.Cut(cred, ",")
	parts := strings.Split(strings.TrimSpace(cred), "/")
	if len(parts) < 5 || parts[len(parts)-1] != "aws4_request" {
		return ""
	}
	return parts[len(parts)-2]
}

// Router sends each request to the handler of its service.
type Router struct {
	handlers map[string]http.Handler
}

// New routes to handlers, keyed by signing name.
func New(handlers map[string]http.Handler) *Router {
	return &Router{handlers: handlers}
}

// ServeHTTP routes r, or answers 400 naming what this endpoint serves.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	svc := Service(r)
	if h, ok := rt.handlers[svc]; ok {
		h.ServeHTTP(w, r)
		return
	}
	names := make([]string, 0, len(rt.handlers))
	for n := range rt.handlers {
		names = append(names, n)
	}
	sort.Strings(names)
	what := "a request signed for no service (no SigV4 credential scope, X-Amz-Target or Lambda path)"
	if svc != "" {
		what = fmt.Sprintf("a request signed for %q", svc)
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-ErrorType", "UnknownOperationException")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprintf(w, `{"__type":"UnknownOperationException","message":%q}`,
		fmt.Sprintf("local mode's AWS endpoint serves %s; this is %s", strings.Join(names, ", "), what))
}
