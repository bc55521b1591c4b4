package secretsapi

import (
	"context"
	"net/http"
	"unicode/utf8"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/store"
)

// CreateInput is Julep's body of POST /secrets.
type CreateInput struct {
	Name        string         `json:"name"`
	Value       *string        `json:"value"`
	Description string         `json:"description,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// Created is POST /secrets' answer: the secret without its value, with its stored description
// and the metadata as sent (sinew does not keep it).
type Created struct {
	store.Secret
	Metadata map[string]any `json:"metadata,omitempty"`
}

// maxDescription bounds a secret's description.
const maxDescription = 1000

func registerCreate(rt *httpapi.Router, h handlers) {
	rt.Schema("SecretCreate", map[string]any{
		"type": "object", "required": []any{"name", "value"}, "additionalProperties": false,
		"properties": map[string]any{
			"name":        map[string]any{"type": "string", "pattern": NamePattern},
			"value":       map[string]any{"type": "string", "minLength": 1, "maxLength": MaxValueBytes, "writeOnly": true, "description": "write-only: no answer ever carries it"},
			"description": map[string]any{"type": "string", "maxLength": maxDescription, "description": "stored and answered by GET /secrets; sent again, it replaces the stored one"},
			"metadata":    map[string]any{"type": "object", "description": "stored and answered by GET /secrets; sent again, it replaces the stored one"},
		},
	})
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/secrets", MaxBody: maxBody, Handler: h.create,
		Op: httpapi.Operation{ID: "createSecret", Tags: []string{"secrets"}, Summary: "Create a developer secret (Julep's route)",
			Description: "Julep's {name, value, description}: as PUT /secrets/{name}, a name that exists has its value replaced. The value is sealed and never answered again.",
			Request:     httpapi.Ref("SecretCreate"),
			Responses: map[int]httpapi.Resp{
				http.StatusCreated:               {Description: "the secret's name and dates (no value)", Schema: httpapi.Ref("Secret")},
				http.StatusBadRequest:            {Description: "a name or value that breaks its rule"},
				http.StatusRequestEntityTooLarge: {Description: "a value over 64 KiB"},
			}}})
}

func (h handlers) create(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	var in CreateInput
	if err := r.Decode(&in); err != nil {
		return nil, err
	}
	if err := checkName(in.Name); err != nil {
		return nil, err
	}
	if err := checkValue(in.Name, in.Value); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(in.Description) > maxDescription {
		return nil, fault.Invalid("description", "description is at most %d characters", maxDescription)
	}
	s, err := h.d.Store.PutSecretDescribed(ctx, r.DeveloperID, in.Name, []byte(*in.Value), &in.Description)
	if err != nil {
		return nil, err
	}
	return httpapi.JSON(http.StatusCreated, Created{Secret: *s, Metadata: in.Metadata}), nil
}
