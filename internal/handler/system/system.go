// Package system is the system Lambda: the executor of system calls (executor.System), with
// session.chat and task.execution.create run by the chat service.
package system

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-lambda-go/lambda"

	chatpkg "sinew/internal/chat"
	"sinew/internal/executor"
	"sinew/internal/handler"
	"sinew/internal/handler/chat"
	"sinew/internal/handler/sealer"
	"sinew/internal/lambdaboundary"
	"sinew/internal/resources"
	systempkg "sinew/internal/system"
)

// New builds the system Lambda from env, with session.chat and task.execution.create run by the
// chat service: the system role also holds what chat needs (the stack's alsoRuns), and a chat's
// own system calls come back here one level deeper, bounded by MaxDepth. The chat service (the
// model, its key, every provider's tool schemas) is built at the first session.chat, not at every
// cold start of a function whose calls are mostly reads and writes of resources.
func New(ctx context.Context, env handler.Env) (lambda.Handler, error) {
	l, err := env.Load(ctx)
	if err != nil {
		return nil, err
	}
	sl, err := sealer.IfKeyed(l)
	if err != nil {
		return nil, err
	}
	st := l.Store(sl)
	chats := &lazyChat{build: func(ctx context.Context) (*chatpkg.Service, error) {
		return chat.Service(ctx, l, env.Logger())
	}}
	starts := chatpkg.System{Starter: chat.Starter(l, l.Store(handler.NoKey{}))}
	x := &systempkg.Executor{Resources: &resources.Service{Store: st, FlagDefaults: l.Config.FlagDefaults}, Chat: chats, Executions: starts}
	return lambdaboundary.Handler(executor.Handler(&executor.System{System: x}, executor.NewTokens(l.AWS))), nil
}

// lazyChat builds the chat service at its first use; a failed build (say, the model's key could
// not be read) fails that call and is tried again at the next.
type lazyChat struct {
	build func(context.Context) (*chatpkg.Service, error)
	mu    sync.Mutex
	svc   *chatpkg.Service
}

var _ systempkg.Chatter = (*lazyChat)(nil)

func (l *lazyChat) Chat(ctx context.Context, cc systempkg.Context, sessionID string, req map[string]any) (any, error) {
	l.mu.Lock()
	if l.svc == nil {
		svc, err := l.build(ctx)
		if err != nil {
			l.mu.Unlock()
			return nil, fmt.Errorf("session.chat's chat service: %w", err)
		}
		l.svc = svc
	}
	svc := l.svc
	l.mu.Unlock()
	return chatpkg.System{Service: svc}.Chat(ctx, cc, sessionID, req)
}
