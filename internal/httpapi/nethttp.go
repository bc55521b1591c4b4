package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"sinew/internal/fault"
)

// MaxEventBody is API Gateway's payload limit: a larger request never reaches a function.
const MaxEventBody = 10 << 20

// ClaimsFunc authenticates a plain HTTP request as API Gateway's JWT authorizer does: the token's
// claims, or an error for a bad token. It is called only for requests with an Authorization header.
type ClaimsFunc func(r *http.Request) (map[string]string, error)

// EventHandler answers an API Gateway HTTP API event; (*Router).ServeEvent is one.
type EventHandler func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// HTTPHandler serves h over plain net/http, as API Gateway would in front of it: each request becomes
// a payload 2.0 event (the developer's claims from claims, when given) and the answer is written
// back. Local mode serves the API through it.
func HTTPHandler(h EventHandler, claims ClaimsFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, err := EventFromHTTP(r, claims)
		if err != nil {
			status, body, headers := ErrorResponse(err)
			for k, v := range headers {
				w.Header().Set(k, v)
			}
			writeJSON(w, status, body)
			return
		}
		resp, err := h(r.Context(), ev)
		if err != nil { // the router never fails; another EventHandler might
			status, body, _ := ErrorResponse(err)
			writeJSON(w, status, body)
			return
		}
		if err := WriteHTTP(w, resp); err != nil {
			status, body, _ := ErrorResponse(err)
			writeJSON(w, status, body)
		}
	})
}

func writeJSON(w http.ResponseWriter, status int, body ErrorBody) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// EventFromHTTP builds the payload 2.0 event API Gateway would send for r. As API Gateway does, it
// refuses a body over the limit and a bad or missing token before it reads a byte of the body.
func EventFromHTTP(r *http.Request, claims ClaimsFunc) (events.APIGatewayV2HTTPRequest, error) {
	authorizer, err := authorize(r, claims)
	if err != nil {
		return events.APIGatewayV2HTTPRequest{}, err
	}
	body, err := readHTTPBody(r)
	if err != nil {
		return events.APIGatewayV2HTTPRequest{}, err
	}
	now := time.Now()
	ev := events.APIGatewayV2HTTPRequest{
		Version:        "2.0",
		RouteKey:       "$default",
		RawPath:        r.URL.EscapedPath(),
		RawQueryString: r.URL.RawQuery,
		Headers:        map[string]string{},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:   "$default",
			AccountID:  "000000000000",
			Stage:      "$default",
			RequestID:  uuid.NewString(),
			APIID:      "local",
			DomainName: r.Host,
			Time:       now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:  now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    r.Method,
				Path:      r.URL.Path,
				Protocol:  r.Proto,
				SourceIP:  remoteIP(r.RemoteAddr),
				UserAgent: r.UserAgent(),
			},
		},
	}
	if q := r.URL.Query(); len(q) > 0 {
		ev.QueryStringParameters = map[string]string{}
		for k, vs := range q {
			ev.QueryStringParameters[k] = strings.Join(vs, ",")
		}
	}
	for k, vs := range r.Header {
		if strings.EqualFold(k, "Cookie") {
			for _, c := range vs {
				for _, part := range strings.Split(c, ";") {
					if part = strings.TrimSpace(part); part != "" {
						ev.Cookies = append(ev.Cookies, part)
					}
				}
			}
			continue
		}
		ev.Headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	if r.Host != "" {
		ev.Headers["host"] = r.Host
	}
	if len(body) > 0 {
		// API Gateway sends text as is and anything else base64-encoded.
		if utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
	}
	ev.RequestContext.Authorizer = authorizer
	return ev, nil
}

// authorize checks r's bearer token with claims (nil: no authorizer). Only GET routes are public,
// so a request that carries a body and no token is refused here, before the body is read.
func authorize(r *http.Request, claims ClaimsFunc) (*events.APIGatewayV2HTTPRequestContextAuthorizerDescription, error) {
	if claims == nil {
		return nil, nil
	}
	if r.Header.Get("Authorization") == "" {
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			return nil, fault.New(fault.Unauthorized, "a bearer token is required (Authorization: Bearer <token>)")
		}
		return nil, nil
	}
	c, err := claims(r)
	if err != nil {
		return nil, fault.New(fault.Unauthorized, "the bearer token was refused: %v", err)
	}
	return &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: c},
	}, nil
}

// readHTTPBody reads r's body up to MaxEventBody; a declared length over it is refused unread.
func readHTTPBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxEventBody {
		return nil, fault.New(fault.TooLarge, "the request body is over %d bytes", MaxEventBody)
	}
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxEventBody+1))
	if err != nil {
		return nil, fault.Invalid("body", "reading the request body: %v", err)
	}
	if len(body) > MaxEventBody {
		return nil, fault.New(fault.TooLarge, "the request body is over %d bytes", MaxEventBody)
	}
	return body, nil
}

func remoteIP(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// WriteHTTP writes an API Gateway answer to w.
func WriteHTTP(w http.ResponseWriter, resp events.APIGatewayV2HTTPResponse) error {
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(resp.Body)
		if err != nil {
			return fault.Wrap(fault.Internal, err, "the answer is marked base64 but does not decode")
		}
		body = b
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	status := resp.StatusCode
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	// A failed write means the client went away after the status was sent: nothing more to tell it.
	_, _ = w.Write(body)
	return nil
}

// HMACClaims verifies bearer tokens signed with HS256 and key, as local mode's stand-in for API
// Gateway's JWT authorizer: signature, expiry and not-before are checked, and the claims come back as
// strings the way API Gateway passes them (strings as they are, other values as JSON).
func HMACClaims(key []byte) ClaimsFunc {
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}), jwt.WithExpirationRequired())
	return func(r *http.Request) (map[string]string, error) {
		raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || strings.TrimSpace(raw) == "" {
			return nil, errors.New("the Authorization header is not Bearer <token>")
		}
		tok, err := parser.Parse(strings.TrimSpace(raw), func(*jwt.Token) (any, error) { return key, nil })
		if err != nil {
			return nil, err
		}
		mc, ok := tok.Claims.(jwt.MapClaims)
		if !ok {
			return nil, errors.New("unexpected claims")
		}
		out := map[string]string{}
		for k, v := range mc {
			switch x := v.(type) {
			case string:
				out[k] = x
			default:
				b, err := json.Marshal(x)
				if err != nil {
					return nil, fmt.Errorf("claim %q: %w", k, err)
				}
				out[k] = string(b)
			}
		}
		return out, nil
	}
}
