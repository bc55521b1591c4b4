// Package secretsapi is the HTTP face of developer secrets (package secrets).
//
// PUT /secrets/{name} writes a value that is never answered again, GET /secrets lists names and
// dates, DELETE /secrets/{name} removes one. Setup and api_call headers refer to a secret as
// {"secret": "NAME"} or "$ secrets.NAME"; the executors resolve those (package secrets).
package secretsapi

import (
	"context"
	"net/http"
	"regexp"
	"sync"
	"unicode/utf8"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/store"
)

// Store is what the routes need of the table: *store.Store. None of it opens a value.
type Store interface {
	PutSecretDescribed(ctx context.Context, dev, name string, value []byte, description *string) (*store.Secret, error)
	ListSecrets(ctx context.Context, dev string, p store.Page) (*store.List[store.Secret], error)
	DeleteSecret(ctx context.Context, dev, name string) error
}

// Deps are the routes' dependencies.
type Deps struct {
	Store Store
}

// Limits of a secret.
const (
	// MaxValueBytes is the longest value, in UTF-8 bytes (a service-account key file fits).
	MaxValueBytes = 64 << 10
	// maxBody leaves room for a value whose every byte is JSON-escaped (\u00XX: 6 bytes).
	maxBody = 6*MaxValueBytes + 1024
)

// NamePattern is the rule for a secret's name: it is referenced as "$ secrets.NAME".
const NamePattern = `^[A-Za-z_][A-Za-z0-9_]{0,63}$`

// Compiled on first use: a counted repetition compiles to hundreds of allocations, paid at every
// Lambda cold start otherwise.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(NamePattern) })

// Input is the body of PUT /secrets/{name}: the value, and what Julep's SDK sends with it
// (secrets.update): the name, which must be the path's, and the description, stored.
type Input struct {
	Value       *string        `json:"value"`
	Name        *string        `json:"name,omitempty"`
	Description *string        `json:"description,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// Register adds the secrets routes and their schemas to rt.
func Register(rt *httpapi.Router, d Deps) {
	rt.Schema("SecretInput", map[string]any{
		"type": "object", "required": []any{"value"}, "additionalProperties": false,
		"properties": map[string]any{
			"value": map[string]any{"type": "string", "minLength": 1, "maxLength": MaxValueBytes,
				"description": "the secret's value, at most 64 KiB of UTF-8; write-only: no answer ever carries it", "writeOnly": true},
			"name":        map[string]any{"type": "string", "description": "Julep's: when given, the path's name"},
			"description": map[string]any{"type": "string", "maxLength": maxDescription, "description": "stored (absent: kept)"},
			"metadata":    map[string]any{"type": "object", "description": "Julep's: accepted, not stored"},
		},
	})
	rt.Schema("Secret", map[string]any{
		"type": "object", "required": []any{"name", "created_at", "updated_at"},
		"properties": map[string]any{
			"name":        map[string]any{"type": "string", "pattern": NamePattern},
			"description": map[string]any{"type": "string", "description": "what POST /secrets was given"},
			"created_at":  map[string]any{"type": "string", "format": "date-time"},
			"updated_at":  map[string]any{"type": "string", "format": "date-time"},
		},
	})
	nameParam := httpapi.Param{Name: "name", In: "path", Required: true,
		Description: "the secret's name; referenced from setup and api_call headers as {\"secret\": \"NAME\"} or \"$ secrets.NAME\"",
		Schema:      map[string]any{"type": "string", "pattern": NamePattern}}
	h := handlers{d}
	rt.Handle(httpapi.Route{Method: http.MethodPut, Path: "/secrets/{name}", MaxBody: maxBody, Handler: h.put,
		Op: httpapi.Operation{ID: "putSecret", Tags: []string{"secrets"}, Summary: "Create or replace a developer secret",
			Description: "The value is sealed with KMS envelope encryption and never answered again, by any route.",
			Params:      []httpapi.Param{nameParam}, Request: httpapi.Ref("SecretInput"),
			Responses: map[int]httpapi.Resp{
				http.StatusCreated:               {Description: "created; the secret's name and dates (no value)", Schema: httpapi.Ref("Secret")},
				http.StatusNoContent:             {Description: "an existing secret's value was replaced"},
				http.StatusBadRequest:            {Description: "a name or value that breaks its rule"},
				http.StatusRequestEntityTooLarge: {Description: "a value over 64 KiB"},
			}}})
	registerCreate(rt, h)
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/secrets", Handler: h.list,
		Op: httpapi.Operation{ID: "listSecrets", Tags: []string{"secrets"}, Summary: "List the developer's secrets by name",
			Description: "Names, descriptions and dates (never values), in name order.",
			Params:      httpapi.PageParams(),
			Responses:   map[int]httpapi.Resp{http.StatusOK: {Description: "a page of secrets", Schema: httpapi.ListOf(httpapi.Ref("Secret"))}}}})
	rt.Handle(httpapi.Route{Method: http.MethodDelete, Path: "/secrets/{name}", Handler: h.delete,
		Op: httpapi.Operation{ID: "deleteSecret", Tags: []string{"secrets"}, Summary: "Delete a developer secret",
			Description: "Setup that still refers to it fails at its next call with an error naming the secret.",
			Params:      []httpapi.Param{nameParam},
			Responses: map[int]httpapi.Resp{
				http.StatusNoContent: {Description: "deleted"},
				http.StatusNotFound:  {Description: "no secret of that name"},
			}}})
}

type handlers struct{ d Deps }

func checkName(name string) error {
	if !nameRE().MatchString(name) {
		return fault.Invalid("name", "a secret's name must match %s (it is referenced as \"$ secrets.NAME\")", NamePattern)
	}
	return nil
}

func (h handlers) put(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	name := r.Param("name")
	if err := checkName(name); err != nil {
		return nil, err
	}
	var in Input
	if err := r.Decode(&in); err != nil {
		return nil, err
	}
	if err := checkValue(name, in.Value); err != nil {
		return nil, err
	}
	if in.Name != nil && *in.Name != name {
		return nil, fault.Invalid("name", "name is %q but the path names %q: a secret is not renamed; create the new name and delete the old", *in.Name, name)
	}
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > maxDescription {
		return nil, fault.Invalid("description", "description is at most %d characters", maxDescription)
	}
	s, err := h.d.Store.PutSecretDescribed(ctx, r.DeveloperID, name, []byte(*in.Value), in.Description)
	if err != nil {
		return nil, err
	}
	if !s.CreatedAt.Equal(s.UpdatedAt) {
		return nil, nil // replaced: 204
	}
	return httpapi.JSON(http.StatusCreated, s), nil
}

// checkValue checks a secret's value against its rules.
func checkValue(name string, v *string) error {
	switch {
	case v == nil:
		return fault.Invalid("value", "value is required: the secret as a string")
	case *v == "":
		return fault.Invalid("value", "value must not be empty: DELETE /secrets/%s removes a secret", name)
	case len(*v) > MaxValueBytes:
		e := fault.New(fault.TooLarge, "value is %d bytes; a secret is at most %d bytes", len(*v), MaxValueBytes)
		e.Field = "value"
		return e
	case !utf8.ValidString(*v):
		return fault.Invalid("value", "value must be UTF-8 text")
	case *v == store.Redacted:
		// "<redacted>" is what answers show in place of setup values; as a secret it would be read
		// as "keep the stored value" wherever it is copied back.
		return fault.Invalid("value", "value must not be %q: that is the placeholder answers show for secret values", store.Redacted)
	}
	return nil
}

func (h handlers) list(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	p, err := r.Page()
	if err != nil {
		return nil, err
	}
	l, err := h.d.Store.ListSecrets(ctx, r.DeveloperID, store.Page{Limit: p.Limit, Cursor: p.Cursor})
	if err != nil {
		return nil, err
	}
	if l.Items == nil {
		l.Items = []store.Secret{}
	}
	return httpapi.OK(l), nil
}

func (h handlers) delete(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	name := r.Param("name")
	if err := checkName(name); err != nil {
		return nil, err
	}
	return nil, h.d.Store.DeleteSecret(ctx, r.DeveloperID, name)
}
