package secrets

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"sinew/internal/fault"
)

// SecretReader opens a developer's named secret: *store.Store satisfies it (OpenSecret). An
// unknown name is a fault.NotFound.
type SecretReader interface {
	OpenSecret(ctx context.Context, dev, name string) ([]byte, error)
}

// Resolver replaces references to developer secrets inside one call's setup and api_call headers
// with their values. Make one per call, inside the executor, after the merge's
// BatchGetItem: each name is read (and opened) once per call however often it is referenced.
// Every value it resolves is registered with the scope, when one is given, so the redacting log
// handler hides it. Not safe for concurrent use.
//
// References:
//   - an object that is exactly {"secret": "NAME"};
//   - Julep's expression strings: "$ secrets.NAME", "$ secrets['NAME']", "$ secrets[\"NAME\"]",
//     and an f-string whose only fields are such references, "$ f'Bearer {secrets.NAME}'"
//     (the usual form of an Authorization header in Julep). Any other "$ " string that mentions
//     secrets is refused as InvalidInput: sinew evaluates no Python.
//
// NAME follows the secret name rule, ^[A-Za-z_][A-Za-z0-9_]{0,63}$.
type Resolver struct {
	rd      SecretReader
	dev     string
	scope   *Scope
	cache   map[string]string
	aliases map[string]string // expression name -> secret name (an api_call's "secrets" field)
}

// NewResolver is a resolver for dev's secrets; scope may be nil.
func NewResolver(rd SecretReader, dev string, scope *Scope) *Resolver {
	return &Resolver{rd: rd, dev: dev, scope: scope, cache: map[string]string{}}
}

// Resolve is v (a JSON value: a setup map, a headers map) with every reference replaced by its
// secret's value; v itself is not changed. field names v in error messages ("setup",
// "api_call.headers"). An unknown name is a fault.InvalidInput naming the path and the name.
func (r *Resolver) Resolve(ctx context.Context, field string, v any) (any, error) {
	return r.walk(ctx, field, v)
}

// ResolveMap is Resolve for an object (nil stays nil).
//
// m itself is never taken for a reference, only the values inside it: a setup whose one setting is
// named "secret" stays a setup.
func (r *Resolver) ResolveMap(ctx context.Context, field string, m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	return r.walkValues(ctx, field, m)
}

// walkValues resolves the values of m (sorted by key, so the first error is the same on every run).
func (r *Resolver) walkValues(ctx context.Context, path string, m map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		e, err := r.walk(ctx, path+"."+k, m[k])
		if err != nil {
			return nil, err
		}
		out[k] = e
	}
	return out, nil
}

// HasRefs reports whether v holds any reference (so a caller can skip the resolver's cost).
func HasRefs(v any) bool {
	switch x := v.(type) {
	case string:
		return isExpr(x)
	case map[string]any:
		if _, ok := refName(x); ok {
			return true
		}
		for _, e := range x {
			if HasRefs(e) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(x, HasRefs)
	}
	return false
}

func (r *Resolver) walk(ctx context.Context, path string, v any) (any, error) {
	switch x := v.(type) {
	case string:
		if !isExpr(x) {
			return x, nil
		}
		return r.expr(ctx, path, x)
	case map[string]any:
		if name, ok := refName(x); ok {
			return r.value(ctx, path, name)
		}
		if s, ok := x["secret"]; ok && len(x) == 1 {
			return nil, fault.Invalid(path, "%s: a secret reference is {\"secret\": \"NAME\"} with NAME matching ^[A-Za-z_][A-Za-z0-9_]{0,63}$; got a %s", path, kindOf(s))
		}
		return r.walkValues(ctx, path, x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			var err error
			if out[i], err = r.walk(ctx, fmt.Sprintf("%s[%d]", path, i), e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}

func kindOf(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("name that breaks the rule (%d characters)", len(x))
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "list"
	}
	return fmt.Sprintf("%T", v)
}

// The expressions are compiled at their first use, not at every function's start: their counted
// repetitions compile to some 300 KB, which pushed the init of the functions past the heap's first
// GC goal.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`) })

// refName recognises {"secret": "NAME"}.
func refName(m map[string]any) (string, bool) {
	if len(m) != 1 {
		return "", false
	}
	s, ok := m["secret"].(string)
	if !ok || !nameRE().MatchString(s) {
		return "", false
	}
	return s, true
}

// secretRef is one reference inside an expression: secrets.NAME or secrets['NAME'].
var secretRef = `secrets(?:\.([A-Za-z_][A-Za-z0-9_]{0,63})|\[\s*'([A-Za-z_][A-Za-z0-9_]{0,63})'\s*\]|\[\s*"([A-Za-z_][A-Za-z0-9_]{0,63})"\s*\])`

var (
	wholeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$\s*` + secretRef + `\s*$`) })
	fieldRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\s*` + secretRef + `\s*\}`) })
	fRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$\s*f(?:'([^']*)'|"([^"]*)")\s*$`) })
)

// isExpr: a string that is a Julep expression mentioning secrets. Other "$ " strings are not this
// package's business and pass through unchanged.
func isExpr(s string) bool {
	return strings.HasPrefix(s, "$") && strings.Contains(s, "secrets")
}

func groupName(m []string) string {
	for _, g := range m[1:] {
		if g != "" {
			return g
		}
	}
	return ""
}

func (r *Resolver) expr(ctx context.Context, path, s string) (any, error) {
	if m := wholeRE().FindStringSubmatch(s); m != nil {
		return r.value(ctx, path, groupName(m))
	}
	if m := fRE().FindStringSubmatch(s); m != nil {
		body := m[1] + m[2]
		// Every field must be a secret reference: sinew evaluates no other Python.
		rest := fieldRE().ReplaceAllString(body, "")
		if !strings.ContainsAny(rest, "{}") {
			var b strings.Builder
			last := 0
			for _, loc := range fieldRE().FindAllStringSubmatchIndex(body, -1) {
				b.WriteString(body[last:loc[0]])
				name := ""
				for g := 1; g < 4; g++ {
					if loc[2*g] >= 0 {
						name = body[loc[2*g]:loc[2*g+1]]
					}
				}
				v, err := r.value(ctx, path, name)
				if err != nil {
					return nil, err
				}
				b.WriteString(v)
				last = loc[1]
			}
			b.WriteString(body[last:])
			return b.String(), nil
		}
	}
	return nil, fault.Invalid(path, "%s: only \"$ secrets.NAME\" and \"$ f'...{secrets.NAME}...'\" expressions are resolved (sinew evaluates no other Python); use {\"secret\": \"NAME\"} or a plain value", path)
}

func (r *Resolver) value(ctx context.Context, path, name string) (string, error) {
	if real, ok := r.aliases[name]; ok {
		name = real
	}
	if v, ok := r.cache[name]; ok {
		return v, nil
	}
	b, err := r.rd.OpenSecret(ctx, r.dev, name)
	if err != nil {
		if fault.Is(err, fault.NotFound) {
			return "", fault.Invalid(path, "%s refers to the secret %q, which does not exist: create it with PUT /secrets/%s", path, name, name)
		}
		// The store's errors carry the name and what failed, never the value.
		return "", fmt.Errorf("%s: read the secret %q: %w", path, name, err)
	}
	v := string(b)
	clear(b)
	r.cache[name] = v
	if r.scope != nil {
		r.scope.Add(v)
	}
	return v, nil
}
