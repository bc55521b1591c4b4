package resources

import (
	"context"
	"net/http"

	"sinew/internal/config"
	"sinew/internal/fault"
	"sinew/internal/httpapi"
)

// FlagInput is the body of PUT /flags/{name}.
type FlagInput struct {
	Value *bool `json:"value"`
}

func (in *FlagInput) check() error {
	if in.Value == nil {
		return errFlagValue
	}
	return nil
}

var errFlagValue = fault.Invalid("value", "value is required: true or false")

// Flags answers the caller's known flags: each its stored value, else the deploy-time default.
func (s *Service) Flags(ctx context.Context, dev string) (map[string]bool, error) {
	all, err := s.Store.Flags(ctx, dev, s.FlagDefaults)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(config.Flags))
	for _, name := range config.Flags {
		out[name] = all[name]
	}
	return out, nil
}

// Flag is one flag, as PUT /flags/{name} answers it.
type Flag struct {
	Name  string `json:"name"`
	Value bool   `json:"value"`
}

// SetFlag sets one of the caller's known flags.
func (s *Service) SetFlag(ctx context.Context, dev, name string, body []byte) (*Flag, error) {
	if err := knownFlag(name); err != nil {
		return nil, err
	}
	in, err := decodeInput[FlagInput](body)
	if err != nil {
		return nil, err
	}
	if err := s.Store.SetFlag(ctx, dev, name, *in.Value); err != nil {
		return nil, err
	}
	return &Flag{Name: name, Value: *in.Value}, nil
}

func (h handlers) registerFlags(rt *httpapi.Router) {
	tags := []string{"flags"}
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/flags", Handler: h.getFlags, Op: httpapi.Operation{ID: "getFlags",
		Summary: "The caller's flags", Tags: tags, Responses: resp(200, "every known flag", ref("Flags"))}})
	rt.Handle(httpapi.Route{Method: http.MethodPut, Path: "/flags/{name}", Handler: h.setFlag, Op: httpapi.Operation{ID: "setFlag",
		Summary: "Set one of the caller's flags", Tags: tags,
		Params:  []httpapi.Param{{Name: "name", In: "path", Schema: map[string]any{"type": "string", "enum": flagEnum()}}},
		Request: ref("FlagInput"), Responses: map[int]httpapi.Resp{200: {Description: "the flag", Schema: ref("Flag")}, 404: {Description: "not a known flag"}}}})
}

func (h handlers) getFlags(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.Flags(ctx, r.DeveloperID))
}

func (h handlers) setFlag(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.SetFlag(ctx, r.DeveloperID, r.Param("name"), r.Body()))
}

func flagEnum() []any {
	out := make([]any, len(config.Flags))
	for i, f := range config.Flags {
		out[i] = f
	}
	return out
}
