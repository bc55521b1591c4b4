package handler

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsv2 "github.com/aws/aws-sdk-go-v2/aws"

	"sinew/internal/config"
	"sinew/internal/fault"
	"sinew/internal/secrets"
	"sinew/internal/store"
)

// Env is what a Lambda is built from: the environment it reads its configuration from, and its
// process's logger and redactor.
type Env struct {
	// Getenv reads one variable; nil: os.Getenv. The bootstraps read their AWS settings through it
	// too; the default build's SDK chain reads the process's environment.
	Getenv func(string) string
	// Log is the function's logger; nil: slog.Default().
	Log *slog.Logger
	// Redactor is the one every log line of the process passes; the executors teach it each
	// call's setup values while the call runs. Nil: each call redacts its own errors only.
	Redactor *secrets.Redactor
}

// Constructor builds one Lambda's handler, behind the Lambda error boundary, from env: what each
// functions/<name>/main.go starts (Start) and local mode runs in process (package all). An error
// fails the cold start.
type Constructor func(ctx context.Context, env Env) (lambda.Handler, error)

func (e Env) getenv(name string) string {
	if e.Getenv == nil {
		return os.Getenv(name)
	}
	return e.Getenv(name)
}

// Logger is Log, or the process's default logger.
func (e Env) Logger() *slog.Logger {
	if e.Log == nil {
		return slog.Default()
	}
	return e.Log
}

// Loaded is the configuration and the AWS SDK's configuration an Env gives.
type Loaded struct {
	Config *config.Config
	AWS    awsv2.Config
}

// Load reads the configuration and the AWS SDK's configuration (loadAWS: the default chain, or the
// Lambda environment alone in the bootstraps).
func (e Env) Load(ctx context.Context) (*Loaded, error) {
	cfg, err := config.Load(func(name string) (string, bool) {
		v := e.getenv(name)
		return v, v != ""
	})
	if err != nil {
		return nil, err
	}
	aws, err := loadAWS(ctx, e.getenv)
	if err != nil {
		return nil, fmt.Errorf("load the AWS configuration: %w", err)
	}
	return &Loaded{Config: cfg, AWS: aws}, nil
}

// Store is the table with sealer (NoKey for functions that never touch setup).
func (l *Loaded) Store(sealer store.Sealer) *store.Store {
	return store.NewFromConfig(l.AWS, l.Config.Table, sealer)
}

// NoKey is the sealer of functions that hold no permission on the secrets key (prepare, function,
// settle, chat, model): they never read or write setup, and any attempt is a fault of sinew's own.
type NoKey struct{}

func (NoKey) Seal(context.Context, map[string]string, []byte) ([]byte, error) {
	return nil, fault.New(fault.Internal, "this function holds no permission to seal secrets")
}

func (NoKey) Open(context.Context, map[string]string, []byte) ([]byte, error) {
	return nil, fault.New(fault.Internal, "this function holds no permission to open secrets")
}
