// Package awsjson is the small part of AWS's JSON 1.0/1.1 protocol that local mode's stand-in
// endpoints share.
//
// It routes a POST by its X-Amz-Target header to an operation, decode the body with a bound, and
// answer results and errors in the shape the AWS SDKs and CLI parse (`{"__type": "...", "message":
// "..."}` with the service's HTTP status).
package awsjson

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Error is an AWS service error: the HTTP status, the error code the SDKs match on (`__type`) and a
// message. Messages must never carry plaintext, keys or payload bodies: they reach logs and callers.
type Error struct {
	Status  int
	Type    string
	Message string
}

func (e *Error) Error() string { return e.Type + ": " + e.Message }

// Errorf makes an Error with a formatted message.
func Errorf(status int, typ, format string, args ...any) *Error {
	return &Error{Status: status, Type: typ, Message: fmt.Sprintf(format, args...)}
}

// Common errors of every JSON-protocol service, with AWS's codes.
func Validation(format string, args ...any) *Error {
	return Errorf(http.StatusBadRequest, "ValidationException", format, args...)
}

// Serialization is AWS's answer to a body that is not JSON or has a member of the wrong type.
func Serialization(format string, args ...any) *Error {
	return Errorf(http.StatusBadRequest, "SerializationException", format, args...)
}

// Op handles one operation: body is the request's JSON (never empty: "{}" when none was sent), and
// the result is marshalled as the response. Returning an *Error (possibly wrapped) answers with it;
// any other error is the service's internal failure.
type Op func(ctx context.Context, body []byte) (any, error)

// Service routes JSON-protocol requests to operations.
type Service struct {
	// Name is for logs ("kms", "events").
	Name string
	// TargetPrefix is the X-Amz-Target prefix before the dot: "TrentService", "AWSEvents".
	TargetPrefix string
	// ContentType of responses: "application/x-amz-json-1.1".
	ContentType string
	// MaxBody bounds a request body in bytes; a larger one is a 413 of type TooLargeType.
	MaxBody      int64
	TooLargeType string
	// InternalType is the code of an unexpected failure ("KMSInternalException", "InternalException").
	InternalType string
	Ops          map[string]Op
	Log          *slog.Logger
}

// ServeHTTP implements http.Handler. It never panics on any input: a panic in an operation is logged
// and answered as the service's internal error.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	reqID := uuid.NewString()
	w.Header().Set("X-Amzn-RequestId", reqID)
	op, status, errType := "", http.StatusOK, ""
	defer func() {
		if p := recover(); p != nil {
			// The panic value may hold request data, so only its type is logged.
			s.logger().Error("operation panicked", "service", s.Name, "op", op, "panic_type", fmt.Sprintf("%T", p))
			status, errType = http.StatusInternalServerError, s.InternalType
			s.writeError(w, &Error{Status: status, Type: s.InternalType, Message: "internal error"})
		}
		s.logger().Info("aws request", "service", s.Name, "op", op, "status", status, "error_type", errType,
			"request_id", reqID, "duration_ms", time.Since(start).Milliseconds())
	}()

	name, body, aerr := s.decode(w, r)
	op = name
	if aerr == nil {
		var out any
		out, aerr = s.call(r.Context(), name, body)
		if aerr == nil {
			if err := s.writeJSON(w, http.StatusOK, out); err != nil {
				s.logger().Warn("writing response", "service", s.Name, "op", op, "error", err)
			}
			return
		}
	}
	status, errType = aerr.Status, aerr.Type
	s.writeError(w, aerr)
}

func (s *Service) logger() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// decode checks the method and target and reads the bounded body.
func (s *Service) decode(w http.ResponseWriter, r *http.Request) (string, []byte, *Error) {
	if r.Method != http.MethodPost {
		// AWS's front end answers other methods on the service root with UnknownOperationException.
		return "", nil, Errorf(http.StatusBadRequest, "UnknownOperationException", "the service accepts only POST requests")
	}
	target := r.Header.Get("X-Amz-Target")
	prefix, name, ok := strings.Cut(target, ".")
	if !ok || prefix != s.TargetPrefix || name == "" {
		return "", nil, Errorf(http.StatusBadRequest, "UnknownOperationException", "unknown operation %q", Clip(target, 100))
	}
	if _, known := s.Ops[name]; !known {
		return Clip(name, 100), nil, Errorf(http.StatusBadRequest, "UnknownOperationException", "unknown operation %q", Clip(target, 100))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.MaxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return name, nil, Errorf(http.StatusRequestEntityTooLarge, s.TooLargeType, "request must be smaller than %d bytes for the %s operation", s.MaxBody, name)
		}
		return name, nil, Serialization("could not read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	return name, body, nil
}

func (s *Service) call(ctx context.Context, name string, body []byte) (any, *Error) {
	out, err := s.Ops[name](ctx, body)
	if err == nil {
		return out, nil
	}
	var aerr *Error
	if errors.As(err, &aerr) {
		return nil, aerr
	}
	s.logger().Error("operation failed", "service", s.Name, "op", name, "error", err)
	return nil, &Error{Status: http.StatusInternalServerError, Type: s.InternalType, Message: "internal error"}
}

func (s *Service) writeJSON(w http.ResponseWriter, status int, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("marshal response: %w", err)
	}
	w.Header().Set("Content-Type", s.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	if _, err = w.Write(data); err != nil {
		return err
	}
	// Sent now, not when the handler returns: the caller does not wait for the request's log line.
	// With its length set, flushing does not turn the answer into a chunked one.
	if err := http.NewResponseController(w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

func (s *Service) writeError(w http.ResponseWriter, e *Error) {
	// AWS's JSON services put the code in the body; the header is what some SDKs check first.
	w.Header().Set("X-Amzn-ErrorType", e.Type)
	_ = s.writeJSON(w, e.Status, struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}{e.Type, e.Message})
}

// Unmarshal decodes a request body into v, answering AWS's SerializationException for bad JSON or
// a member of the wrong type (the message names the member, never its value). Unknown members are
// ignored, as AWS's services do.
func Unmarshal(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return Serialization("member %q has the wrong type: expected %s", typeErr.Field, typeErr.Type)
		}
		var b64 base64.CorruptInputError
		if errors.As(err, &b64) {
			return Serialization("a blob member is not valid base64")
		}
		return Serialization("the request body is not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return Serialization("the request body has data after the JSON value")
	}
	return nil
}

// Clip is s cut to n bytes with "..." when longer: a caller's value echoed in an error message.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
