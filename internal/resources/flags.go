package resources

import (
	"context"

	"sinew/internal/config"
	"sinew/internal/fault"
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
