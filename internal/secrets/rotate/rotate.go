// Package rotate is the body of the rotate-secrets command (`go run ./infra/local rotate-secrets`,
// or run against AWS with the same environment).
//
// After the secrets key has a new version (automatic or on-demand rotation in AWS,
// kms.Service.Rotate locally), it moves every sealed value in the table to that version with KMS
// ReEncrypt, so values no longer depend on older key material. The data keys never leave KMS in the
// clear, and no plaintext is read.
package rotate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"sinew/internal/config"
	"sinew/internal/secrets/envelope"
	"sinew/internal/store"
)

// DB is what rotation needs of DynamoDB: the store's requests and a Scan.
type DB interface {
	store.API
	store.ScanAPI
}

// Rotate reseals every sealed value of table under env's key (its newest version) and reports the
// counts. Needs kms:ReEncryptFrom and kms:ReEncryptTo on the key, and Scan and UpdateItem on the
// table: a role of its own, not any function's.
func Rotate(ctx context.Context, db DB, table string, env *envelope.Envelope, log *slog.Logger) (store.ResealCounts, error) {
	st := store.New(db, table, env, store.WithLogger(log))
	c, err := st.ResealAll(ctx, db, env.Reseal)
	log.InfoContext(ctx, "secrets resealed", "table", table, "key", env.KeyID(),
		"items", c.Items, "values", c.Values, "resealed", c.Resealed, "changed", c.Changed, "failed", c.Failed)
	if err != nil {
		return c, fmt.Errorf("rotate secrets: %d of %d values failed, the first: %w", c.Failed, c.Values, err)
	}
	return c, nil
}

// Run reads the configuration (SINEW_TABLE, SINEW_SECRETS_KEY) and the AWS SDK's (endpoints through
// AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_KMS, as local mode sets them), rotates, and writes
// the counts to out as JSON.
func Run(ctx context.Context, out io.Writer, log *slog.Logger) error {
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	aws, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("load the AWS configuration: %w", err)
	}
	env, err := envelope.NewEnvelopeFromConfig(aws, cfg.SecretsKey)
	if err != nil {
		return err
	}
	c, err := Rotate(ctx, dynamodb.NewFromConfig(aws), cfg.Table, env, log)
	b, jerr := json.Marshal(c)
	if jerr == nil {
		fmt.Fprintf(out, "%s\n", b)
	}
	return err
}
