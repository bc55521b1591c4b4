package all

import (
	"context"
	"sync"

	"sinew/internal/integrations"
	"sinew/internal/merge"
	"sinew/internal/netguard"
)

// Lazy is the registry of every provider, each registered (its schemas generated and compiled) at
// its first use rather than all at a cold start: a function runs the few providers its calls name.
// A name no provider has registers them all first, so the error lists every known provider.
type Lazy struct {
	reg    *integrations.Registry
	byName map[string]*integrations.Provider

	mu   sync.Mutex
	done map[string]bool
}

// NewLazy makes the lazy registry of every provider, connecting through guard.
func NewLazy(guard *netguard.Policy, opts ...integrations.Option) *Lazy {
	l := &Lazy{reg: integrations.New(guard, opts...), byName: map[string]*integrations.Provider{}, done: map[string]bool{}}
	for _, p := range Providers() {
		l.byName[p.Name] = p
	}
	return l
}

// ready registers provider (or, for a name no provider has, every provider) unless it is already.
func (l *Lazy) ready(provider string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := []string{provider}
	if l.byName[provider] == nil {
		names = names[:0]
		for n := range l.byName {
			names = append(names, n)
		}
	}
	for _, n := range names {
		if l.done[n] {
			continue
		}
		if err := l.reg.Register(l.byName[n]); err != nil {
			return err
		}
		l.done[n] = true
	}
	return nil
}

// Execute implements the integration handler's Providers.
func (l *Lazy) Execute(ctx context.Context, provider, method string, setup, args map[string]any) (any, error) {
	if err := l.ready(provider); err != nil {
		return nil, err
	}
	return l.reg.Execute(ctx, provider, method, setup, args)
}

// SetupBinding implements the integration handler's Providers.
func (l *Lazy) SetupBinding(provider string) merge.Binding {
	if l.ready(provider) != nil {
		return merge.Binding{}
	}
	return l.reg.SetupBinding(provider)
}

// Catalogue implements catalogue.Source: every provider, so all are set up first.
func (l *Lazy) Catalogue() []integrations.ProviderEntry {
	_ = l.ready("") // no provider has the name "": every provider; one that fails is left out
	return l.reg.Catalogue()
}

// ProviderInfo implements catalogue.Source.
func (l *Lazy) ProviderInfo(name string) (integrations.ProviderEntry, error) {
	if err := l.ready(name); err != nil {
		return integrations.ProviderEntry{}, err
	}
	return l.reg.ProviderInfo(name)
}

// ToolSchema implements toolfmt.Integrations and catalogue.Source.
func (l *Lazy) ToolSchema(provider, method, name string) (integrations.Function, error) {
	if err := l.ready(provider); err != nil {
		return integrations.Function{}, err
	}
	return l.reg.ToolSchema(provider, method, name)
}
