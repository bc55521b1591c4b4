// Package sealer builds the sealer of setup secrets for the functions that hold the secrets key:
// api and system seal, integration and apicall open. It is apart from package handler because it
// links the KMS client (package envelope), which the other functions never need.
package sealer

import (
	"log/slog"

	"sinew/internal/handler"
	"sinew/internal/resources"
	"sinew/internal/secrets/envelope"
	"sinew/internal/store"
)

// New is the KMS envelope sealer over the secrets key (SINEW_SECRETS_KEY): the one format every
// function seals and opens, and the rotation command reseals.
func New(l *handler.Loaded) (store.Sealer, error) {
	return envelope.NewEnvelopeFromConfig(l.AWS, l.Config.SecretsKey)
}

// IfKeyed is New when SINEW_SECRETS_KEY is set; without it, a sealer that refuses, so writes that
// carry setup secrets are refused and the rest works (the api and system functions).
func IfKeyed(l *handler.Loaded) (store.Sealer, error) {
	if l.Config.SecretsKey == "" {
		slog.Warn("SINEW_SECRETS_KEY is not set: writes that carry setup secrets will be refused")
		return resources.SealerUnavailable{}, nil
	}
	return New(l)
}
