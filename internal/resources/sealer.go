package resources

import (
	"context"

	"sinew/internal/fault"
)

// SealerUnavailable is the store's Sealer of a function deployed without SINEW_SECRETS_KEY: every
// record without setup secrets is written and read as usual, and a write that carries a setup value
// fails with a message saying so, instead of storing a secret in the clear.
type SealerUnavailable struct{}

func (SealerUnavailable) Seal(context.Context, map[string]string, []byte) ([]byte, error) {
	return nil, fault.New(fault.Internal, "setup secrets cannot be stored: this function has no SINEW_SECRETS_KEY")
}

func (SealerUnavailable) Open(context.Context, map[string]string, []byte) ([]byte, error) {
	return nil, fault.New(fault.Internal, "setup secrets cannot be read: this function has no SINEW_SECRETS_KEY")
}
