package system

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/resources"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// Executor runs system calls.
type Executor struct {
	Resources *resources.Service
	// Executions starts task executions; nil answers "not available" for task.execution.create.
	Executions ExecutionStarter
	// Chat runs session.chat; nil answers "not available".
	Chat Chatter
	// MaxDepth bounds session.chat through system tools (DefaultMaxDepth when 0).
	MaxDepth int
}

// idKeys are the arguments that must be UUIDs (Julep coerces the same keys).
var idKeys = []string{"agent_id", "user_id", "task_id", "session_id", "doc_id", "owner_id"}

// Name is how a call's combination is named in messages: resource[.subresource].operation.
func Name(resource, subresource, operation string) string {
	if subresource == "" {
		return resource + "." + operation
	}
	return resource + "." + subresource + "." + operation
}

// Run executes one system call for the caller cc and answers its output as a plain JSON value.
func (x *Executor) Run(ctx context.Context, cc Context, call *tool.SystemCall) (any, error) {
	if call == nil {
		return nil, fault.Invalid("call.system", "call.system is required")
	}
	if cc.DeveloperID == "" {
		return nil, fault.Invalid("context.developer_id", "context.developer_id is required")
	}
	sub := ""
	if call.Subresource != nil {
		sub = *call.Subresource
	}
	h, ok := table[key{call.Resource, sub, call.Operation}]
	if !ok {
		return nil, fault.Invalid("system", "system call %s is not supported; the supported calls are %s",
			Name(call.Resource, sub, call.Operation), strings.Join(Supported(), ", "))
	}
	a, err := reshape(call, sub)
	if err != nil {
		return nil, err
	}
	out, err := h.run(ctx, x, cc, a)
	if err != nil {
		return nil, argumentsField(err)
	}
	return plain(out)
}

// reshape applies the rules of the package comment to a copy of the call's arguments.
func reshape(call *tool.SystemCall, sub string) (args, error) {
	a := args{}
	if call.Arguments != nil {
		a = jsonv.Clone(call.Arguments).(map[string]any)
	}
	// The tenancy guard: the developer is the caller, never an argument.
	delete(a, "developer_id")
	delete(a, "x_developer_id")
	own := call.Resource + "_id"
	if call.ResourceID != nil && *call.ResourceID != "" {
		if _, set := a[own]; !set {
			a[own] = *call.ResourceID
		}
	}
	if sub == "doc" {
		if ot, ok := a["owner_type"]; ok {
			if ot != call.Resource {
				return nil, fault.Invalid("arguments.owner_type", "arguments.owner_type must be %q for a %s doc call", call.Resource, call.Resource)
			}
			delete(a, "owner_type")
		}
		if oid, ok := a["owner_id"]; ok {
			if prev, set := a[own]; set && prev != oid {
				return nil, fault.Invalid("arguments.owner_id", "arguments.owner_id and arguments.%s name different owners", own)
			}
			a[own] = oid
			delete(a, "owner_id")
		}
	}
	for _, k := range idKeys {
		v, ok := a[k]
		if !ok || v == nil {
			delete(a, k)
			continue
		}
		s, isStr := v.(string)
		if !isStr {
			return nil, fault.Invalid("arguments."+k, "arguments.%s must be a UUID string", k)
		}
		u, err := uuid.Parse(s)
		if err != nil {
			return nil, fault.Invalid("arguments."+k, "arguments.%s %q is not a UUID", k, s)
		}
		a[k] = u.String() // canonical form, as Julep's coercion gives
	}
	return a, nil
}

// argumentsField names the field of an input fault as the call's argument.
func argumentsField(err error) error {
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Field == "" || fe.Kind != fault.InvalidInput ||
		strings.HasPrefix(fe.Field, "arguments") || strings.HasPrefix(fe.Field, "context.") || fe.Field == "system" {
		return err
	}
	c := *fe
	c.Field = "arguments." + fe.Field
	return &c
}

// plain is v as a jsonv value (maps, slices, strings, int64, float64, bool, nil).
func plain(v any) (any, error) {
	b, err := jsonv.Encode(v)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode the result")
	}
	return jsonv.Decode(b)
}

// args are a call's reshaped arguments.
type args map[string]any

// id takes a required id argument (already checked as a UUID by reshape).
func (a args) id(k string) (string, error) {
	s, _ := a[k].(string)
	if s == "" {
		return "", fault.Invalid("arguments."+k, "arguments.%s is required", k)
	}
	delete(a, k)
	return s, nil
}

// page takes limit (an integer, or a string of one, as Julep's tests send) and cursor.
func (a args) page() (store.Page, error) {
	var p store.Page
	if v, ok := a["limit"]; ok && v != nil {
		switch n := v.(type) {
		case int64:
			p.Limit = int(n)
		case float64:
			if n != float64(int(n)) {
				return p, fault.Invalid("arguments.limit", "arguments.limit must be an integer")
			}
			p.Limit = int(n)
		case string:
			i, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil {
				return p, fault.Invalid("arguments.limit", "arguments.limit must be an integer, not %q", n)
			}
			p.Limit = i
		default:
			return p, fault.Invalid("arguments.limit", "arguments.limit must be an integer")
		}
		if p.Limit < 1 || p.Limit > store.MaxLimit {
			return p, fault.Invalid("arguments.limit", "arguments.limit must be between 1 and %d", store.MaxLimit)
		}
	}
	delete(a, "limit")
	if v, ok := a["cursor"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			return p, fault.Invalid("arguments.cursor", "arguments.cursor must be a string: the next_cursor of the previous page")
		}
		p.Cursor = s
	}
	delete(a, "cursor")
	if _, ok := a["offset"]; ok {
		return p, fault.Invalid("arguments.offset", "arguments.offset is not supported: lists page with cursor (the next_cursor of the previous page)")
	}
	return p, a.none()
}

// none refuses arguments left over, naming the first.
func (a args) none() error {
	for _, k := range slices.Sorted(maps.Keys(a)) {
		return fault.Invalid("arguments."+k, "unknown argument %q", k)
	}
	return nil
}

// body is what is left of the arguments as a request body: a plain object, or Julep's {"data":
// {...}} when data is the only argument left.
func (a args) body() ([]byte, error) {
	v := map[string]any(a)
	if d, ok := a["data"].(map[string]any); ok && len(a) == 1 {
		v = d
	}
	if err := refuseSetup(v); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "the arguments cannot be written as JSON")
	}
	return b, nil
}
