// Package systemenv builds the system Lambda's executor from the environment.
package systemenv

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"sinew/internal/chat"
	"sinew/internal/executor"
	"sinew/internal/handler"
	"sinew/internal/handler/chatenv"
	"sinew/internal/handler/sealer"
	"sinew/internal/resources"
	"sinew/internal/system"
)

// Executor builds the executor from the environment, with session.chat and task.execution.create
// run by the chat service: the system role also holds what chat needs (the stack's alsoRuns), and
// a chat's own system calls come back here one level deeper, bounded by MaxDepth. The chat
// service (the model, its key, every provider's tool schemas) is built at the first session.chat,
// not at every cold start of a function whose calls are mostly reads and writes of resources.
func Handler(ctx context.Context) (func(context.Context, executor.Envelope) (map[string]any, error), error) {
	x, tk, err := Executor(ctx)
	if err != nil {
		return nil, err
	}
	return executor.Handler(&executor.System{System: x}, tk), nil
}

// Executor builds the system executor and its token answerer.
func Executor(ctx context.Context) (*system.Executor, *executor.Tokens, error) {
	env, err := handler.Load(ctx)
	if err != nil {
		return nil, nil, err
	}
	sl, err := sealer.IfKeyed(env)
	if err != nil {
		return nil, nil, err
	}
	st := env.Store(sl)
	chats := &lazyChat{build: func(ctx context.Context) (*chat.Service, error) {
		return chatenv.Service(ctx, env, slog.Default())
	}}
	starts := chat.System{Starter: chatenv.Starter(env, env.Store(handler.NoKey{}))}
	return &system.Executor{Resources: &resources.Service{Store: st, FlagDefaults: env.Config.FlagDefaults}, Chat: chats, Executions: starts},
		executor.NewTokens(env.AWS), nil
}

// lazyChat builds the chat service at its first use; a failed build (say, the model's key could
// not be read) fails that call and is tried again at the next.
type lazyChat struct {
	build func(context.Context) (*chat.Service, error)
	mu    sync.Mutex
	svc   *chat.Service
}

var _ system.Chatter = (*lazyChat)(nil)

func (l *lazyChat) Chat(ctx context.Context, cc system.Context, sessionID string, req map[string]any) (any, error) {
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
	return chat.System{Service: svc}.Chat(ctx, cc, sessionID, req)
}
