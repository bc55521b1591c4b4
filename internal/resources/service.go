package resources

import (
	"slices"
	"strings"
	"unicode/utf8"

	"sinew/internal/config"
	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/store"
)

// Service is the resource operations both the HTTP routes and the system executor run: bodies in,
// records out, all scoped to the developer given by the caller.
type Service struct {
	Store *store.Store
	// FlagDefaults are the known flags' deploy-time defaults (config SINEW_FLAG_DEFAULTS); a flag
	// missing here defaults to false.
	FlagDefaults map[string]bool
	// Machines compiles tasks' workflows into their state machines; nil refuses tasks with
	// workflows.
	Machines TaskMachines
	// Models are the ids of the models agents may name (GET /agents/models): the configured one.
	Models []string
}

// input is a request body type: check runs its rules after the strict decode.
type input interface{ check() error }

// decodeInput decodes body strictly into a new T and checks it.
func decodeInput[T any, P interface {
	*T
	input
}](body []byte) (*T, error) {
	var v T
	if err := httpapi.DecodeJSON(body, &v); err != nil {
		return nil, err
	}
	if err := P(&v).check(); err != nil {
		return nil, err
	}
	return &v, nil
}

// patchInput merges patch (a JSON object, RFC 7386) into cur and decodes the result strictly, so an
// unknown or mistyped field in the patch is named as in a full body.
func patchInput[T any, P interface {
	*T
	input
}](cur *T, p map[string]any) (*T, error) {
	m, err := toValue(cur)
	if err != nil {
		return nil, err
	}
	merged, _ := mergePatch(m, p).(map[string]any)
	b, err := encodeBody(merged)
	if err != nil {
		return nil, err
	}
	return decodeInput[T, P](b)
}

// decodePatch reads a PATCH body: a JSON object, checked before the record is read, so a malformed
// body is a 400 whether or not the record exists.
func decodePatch(body []byte) (map[string]any, error) {
	var p map[string]any
	if err := httpapi.DecodeJSON(body, &p); err != nil {
		return nil, err
	}
	return p, nil
}

// Limits on free text, so a record stays well under DynamoDB's 400 KB item limit.
const (
	maxName  = 255
	maxAbout = 16000
)

func checkText(field, v string, required bool, max int) error {
	if required && v == "" {
		return fault.Invalid(field, "%s is required", field)
	}
	if n := utf8.RuneCountInString(v); n > max {
		return fault.Invalid(field, "%s is %d characters; at most %d are allowed", field, n, max)
	}
	return nil
}

// checkStrings accepts a string or a list of strings (Julep's instructions and doc content).
func checkStrings(field string, v any, required bool) error {
	switch x := v.(type) {
	case nil:
		if required {
			return fault.Invalid(field, "%s is required: a string or a list of strings", field)
		}
	case string:
		if required && x == "" {
			return fault.Invalid(field, "%s is required: a string or a list of strings", field)
		}
	case []any:
		for i, e := range x {
			if _, ok := e.(string); !ok {
				return fault.Invalid(field, "%s[%d] must be a string: %s is a string or a list of strings", field, i, field)
			}
		}
	default:
		return fault.Invalid(field, "%s must be a string or a list of strings", field)
	}
	return nil
}

func page(p httpapi.Page) store.Page { return store.Page{Limit: p.Limit, Cursor: p.Cursor} }

// knownFlag refuses a flag sinew does not know (config.Flags), as NotFound: the flag is a path
// resource.
func knownFlag(name string) error {
	if !slices.Contains(config.Flags, name) {
		return fault.New(fault.NotFound, "no flag %q; the flags are %s", name, strings.Join(config.Flags, ", "))
	}
	return nil
}

// Owner helpers for the routes' path parameters.
func agentOwner(id string) store.Owner { return store.Owner{Kind: store.OwnerAgent, ID: id} }
func userOwner(id string) store.Owner  { return store.Owner{Kind: store.OwnerUser, ID: id} }
func taskOwner(id string) store.Owner  { return store.Owner{Kind: store.OwnerTask, ID: id} }
