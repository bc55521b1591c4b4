package handler

import (
	"context"
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
