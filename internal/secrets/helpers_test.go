package secrets_test

import (
	"context"
	"testing"

	"sinew/internal/secrets/envelope"
	"sinew/internal/secrets/secretstest"
	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

func bg() context.Context { return context.Background() }

// env is one test's world: local KMS on loopback, a table in DynamoDB Local, the store sealing
// with the KMS envelope.
type env struct {
	kms   *secretstest.KMS
	env   *envelope.Envelope
	st    *store.Store
	db    ddbClient
	table string
}

type ddbClient interface {
	store.API
	store.ScanAPI
	store.AdminAPI
}

func newEnv(t *testing.T) *env {
	t.Helper()
	k := secretstest.StartKMS(t)
	e := k.Envelope(t)
	db := ddblocal.Client(t)
	table := ddblocal.NewTable(t, db)
	return &env{kms: k, env: e, st: store.New(db, table, e), db: db, table: table}
}
