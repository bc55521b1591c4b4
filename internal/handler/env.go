package handler

import (
	"context"
	"errors"
	"fmt"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"

	"sinew/internal/config"
	"sinew/internal/fault"
	"sinew/internal/store"
)

// Env is the shared part of a handler's dependencies.
type Env struct {
	Config *config.Config
	AWS    awsv2.Config
}

// Load reads the configuration and the AWS SDK's configuration (loadAWS: the default chain, or the
// Lambda environment alone in the bootstraps).
func Load(ctx context.Context) (*Env, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return nil, err
	}
	aws, err := loadAWS(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the AWS configuration: %w", err)
	}
	return &Env{Config: cfg, AWS: aws}, nil
}

// Store is the table with sealer (NoKey for functions that never touch setup).
func (e *Env) Store(sealer store.Sealer) *store.Store {
	return store.NewFromConfig(e.AWS, e.Config.Table, sealer)
}

// NoKey is the sealer of functions that hold no permission on the secrets key (prepare, function,
// settle): they never read or write setup, and any attempt is a fault of sinew's own.
type NoKey struct{}

func (NoKey) Seal(context.Context, map[string]string, []byte) ([]byte, error) {
	return nil, fault.New(fault.Internal, "this function holds no permission to seal secrets")
}

func (NoKey) Open(context.Context, map[string]string, []byte) ([]byte, error) {
	return nil, fault.New(fault.Internal, "this function holds no permission to open secrets")
}

// Redacter replaces known secret values in a text: a call's *secrets.Scope.
type Redacter interface{ Redact(string) string }

// RedactErr is err with every value red knows replaced, when its message holds one: what an
// executor fails with is recorded by call id and travels in the execution's history, and a
// provider's error may echo what it was sent. The kind and field stay; the cause is dropped, as
// its text is what held the value. red is the call's own scope, never the process's redactor:
// another call's secrets must not change what this call answers.
func RedactErr(red Redacter, err error) error {
	if err == nil || red == nil {
		return err
	}
	msg := err.Error()
	r := red.Redact(msg)
	if r == msg {
		return err
	}
	out := &fault.Error{Kind: fault.KindOf(err), Msg: r}
	var fe *fault.Error
	if errors.As(err, &fe) {
		out.Field = fe.Field
	}
	return out
}
