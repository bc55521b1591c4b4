package asl

import (
	"sync"
)

// scope holds variables. Map iterations and Parallel branches get a child scope: they read the
// outer variables, and what they assign stays theirs (AWS's variable scoping).
type scope struct {
	mu     sync.RWMutex
	vars   map[string]any
	parent *scope
}

func newScope(parent *scope) *scope { return &scope{parent: parent} }

func (s *scope) get(name string) (any, bool) {
	for c := s; c != nil; c = c.parent {
		c.mu.RLock()
		v, ok := c.vars[name]
		c.mu.RUnlock()
		if ok {
			return v, true
		}
	}
	return nil, false
}

func (s *scope) set(vals map[string]any) {
	if len(vals) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vars == nil {
		s.vars = make(map[string]any, len(vals))
	}
	for k, v := range vals {
		s.vars[k] = v
	}
}

// all flattens the visible variables, inner ones winning.
func (s *scope) all() map[string]any {
	var chain []*scope
	for c := s; c != nil; c = c.parent {
		chain = append(chain, c)
	}
	out := map[string]any{}
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		c.mu.RLock()
		for k, v := range c.vars {
			out[k] = v
		}
		c.mu.RUnlock()
	}
	return out
}

// snapshot copies this scope's own variables, for persistence.
func (s *scope) snapshot() map[string]any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]any, len(s.vars))
	for k, v := range s.vars {
		out[k] = v
	}
	return out
}
