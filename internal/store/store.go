// Package store is sinew's one DynamoDB table.
//
// It holds agents, tools, tasks, sessions and messages, users, docs, secrets, executions, pending
// function calls, idempotency records, flags and stored payloads, plus the one-request lookup of
// what the setup/arguments merge needs (package merge).
//
// Every method takes the developer id, from the authenticated caller, as its own argument, and every
// key it builds starts with DEV#<developer>: a developer can never reach another's items, and an item
// that is not the caller's is the same fault.NotFound as one that does not exist.
//
// # Keys
//
// d is the developer id, escaped so that no id can forge a key separator; ids sinew makes are UUIDv7.
//
//	pk                       sk                  item
//	DEV#d                    AGENT#<id>          agent (metadata visible with setup redacted; setup sealed value by value)
//	DEV#d                    USER#<id>           user
//	DEV#d                    TASK#<id>           task (agent_id inside)
//	DEV#d                    SESSION#<id>        session (agent_id, user_id inside; a chat's claim on its turn beside, chatturn.go)
//	DEV#d                    SECRET#<name>       developer secret (sealed value)
//	DEV#d                    FLAG#<name>         flag
//	DEV#d#AGENT#<id>         TOOL#<id>           a tool of the agent
//	DEV#d#AGENT#<id>         TOOLNAME#<name>     name claim: makes the name unique per owner; holds a copy of the tool
//	DEV#d#AGENT#<id>         DOC#<id>, TASKREF#<id>, SESSIONREF#<id>   docs; pointers to the agent's tasks and sessions
//	DEV#d#TASK#<id>          TOOL#<id>, TOOLNAME#<name>                 a task's tools
//	DEV#d#USER#<id>          DOC#<id>            a user's docs
//	DEV#d#SESSION#<id>       MSG#<id>            messages, in order (UUIDv7 ids)
//	DEV#d#TOOL#<id>          SETUP               a stored tool's sealed integration.setup, one value per setting
//	DEV#d#EXEC#<name>        EXEC, CALL#<id>     an execution and its function calls
//	DEV#d#IDEM#<key>         IDEM                idempotency record (TTL)
//	DEV#d#PAYLOAD#<id>       CHUNK#<n>, MANIFEST a stored payload (payloads.go)
//
// GSI1 (sparse) lists executions newest first (gsi1pk DEV#d#EXECS) and function calls by status
// (gsi1pk DEV#d#CALLS#<status>). GSI2 (sparse, keys only) holds the executions not yet final, across
// developers, in OpenShards partitions (gsi2pk OPEN#<n>), for the sweep (open.go).
//
// Free-form JSON (metadata, settings, arguments, outputs) is kept as a JSON string in the item's doc
// attribute, so numbers come back exactly as written (int64 stays int64, see package jsonv); what
// conditions and indexes need (status, version, lease, TTL, keys) is kept as native attributes.
//
// # Deleting
//
// Deleting an agent, task, session or user removes everything under it: an agent's tools (with their
// name claims and sealed setups), docs, tasks (with their tools) and sessions (with their messages);
// a user's docs. An agent's tasks and sessions are deleted first, each whole, while the agent still
// stands. Then the owner is marked deleting: from then on it reads as NotFound, and every create
// under it fails its condition check. Then its remaining children go (and any task or session
// created in between), and the owner item last. Reads of children go through their owner (in the
// same request where it costs nothing more), so if a delete stops half way, what is left is either
// still reachable through a live owner, or unreachable; repeating the delete finishes it.
// Executions, their calls, idempotency records, payloads, secrets and flags belong to the
// developer, not to an agent, and stay (TTL removes the calls, records and payloads that have one).
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/google/uuid"

	"sinew/internal/fault"
)

// API is the part of *dynamodb.Client the store uses: narrow, so that a request-counting or
// tracing wrapper can sit in front of it.
type API interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// Sealer encrypts and decrypts setup secrets. encCtx binds a sealed value to where it belongs
// ({developer, owner, tool, field, key} for one setup value, {developer, "secret", name} for a
// developer secret): opening it under another context fails. The KMS envelope is package secrets';
// package seal has an AES-256-GCM one for tests.
type Sealer interface {
	Seal(ctx context.Context, encCtx map[string]string, plaintext []byte) ([]byte, error)
	Open(ctx context.Context, encCtx map[string]string, sealed []byte) ([]byte, error)
}

// Store is the table. It is safe for concurrent use.
type Store struct {
	db     API
	table  string
	sealer Sealer
	now    func() time.Time
	log    *slog.Logger
}

// Option changes a Store made by New.
type Option func(*Store)

// WithClock sets the clock (tests use it to pass TTLs and leases).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// New is a store over the table named table. sealer seals every setup secret written through it.
func New(db API, table string, sealer Sealer, opts ...Option) *Store {
	s := &Store{db: db, table: table, sealer: sealer, now: time.Now, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Table is the table's name.
func (s *Store) Table() string { return s.table }

func (s *Store) clock() time.Time { return s.now().UTC() }

// ---- keys ----

// esc makes a caller-given string safe inside a key: '#' (the separator) and '%' are escaped, so
// distinct inputs always give distinct keys.
func esc(v string) string { return url.PathEscape(v) }

func devPK(dev string) string { return "DEV#" + esc(dev) }

// Owner names what a tool or doc belongs to.
type Owner struct {
	Kind OwnerKind
	ID   string
}

// OwnerKind is the kind of an owner.
type OwnerKind string

// Owner kinds. Tools belong to agents and tasks, docs to agents and users.
const (
	OwnerAgent   OwnerKind = "agent"
	OwnerTask    OwnerKind = "task"
	OwnerUser    OwnerKind = "user"
	OwnerSession OwnerKind = "session"
)

func (k OwnerKind) prefix() string {
	switch k {
	case OwnerAgent:
		return "AGENT"
	case OwnerTask:
		return "TASK"
	case OwnerUser:
		return "USER"
	case OwnerSession:
		return "SESSION"
	}
	return ""
}

func (k OwnerKind) field() string { return string(k) + "_id" }

// itemKey is an item's primary key.
type itemKey struct{ pk, sk string }

func (k itemKey) av() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{AttrPK: str(k.pk), AttrSK: str(k.sk)}
}

// ownerItem is the key of an owner's own record; ownerPK the partition of its children.
func ownerItem(dev string, o Owner) itemKey { return itemKey{devPK(dev), o.Kind.prefix() + "#" + o.ID} }
func ownerPK(dev string, o Owner) string    { return devPK(dev) + "#" + o.Kind.prefix() + "#" + o.ID }

// ---- validation ----

// checkDev refuses a developer id that cannot be a JWT claim: empty, too long, not UTF-8, or with
// control characters. It is a fault of sinew's wiring, not the caller's body, but still typed.
func checkDev(dev string) error {
	if dev == "" || len(dev) > 512 || !utf8.ValidString(dev) || strings.IndexFunc(dev, unicode.IsControl) >= 0 {
		return fault.Invalid("developer_id", "developer id must be 1 to 512 printable UTF-8 bytes")
	}
	return nil
}

// checkID refuses an id that is not a canonical UUID (every id sinew makes is one).
func checkID(field, id string) error {
	if len(id) != 36 {
		return fault.Invalid(field, "%s must be a UUID", field)
	}
	if _, err := uuid.Parse(id); err != nil {
		return fault.Invalid(field, "%s must be a UUID", field)
	}
	return nil
}

func checkOwner(o Owner, kinds ...OwnerKind) error {
	ok := false
	for _, k := range kinds {
		ok = ok || o.Kind == k
	}
	if !ok {
		return fault.Invalid("owner", "owner must be one of %v, not %q", kinds, o.Kind)
	}
	return checkID(o.Kind.field(), o.ID)
}

// checkOpaque refuses an opaque id (execution names, call ids, keys) that is empty, too long or has
// control characters.
func checkOpaque(field, v string, max int) error {
	if v == "" || len(v) > max || !utf8.ValidString(v) || strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return fault.Invalid(field, "%s must be 1 to %d printable characters", field, max)
	}
	return nil
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// givenID keeps an id a caller chose (checked as field), or makes a new one.
func givenID(id *string, field string) error {
	if *id == "" {
		*id = newID()
		return nil
	}
	return checkID(field, *id)
}

// sortTime formats t at a fixed width, so that sort keys order by time.
func sortTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

// ---- errors ----

// dbErr types an SDK error (fault.FromAWS) after DynamoDB's own rules: an item over its size
// limit is TooLarge, and a transaction that lost to a concurrent change is Transient. what says
// which operation failed.
func dbErr(err error, what string) error {
	if err == nil || errors.As(err, new(*fault.Error)) {
		return err
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "ValidationException" && strings.Contains(ae.ErrorMessage(), "size") {
		// The one validation failure a caller can cause: an item over 400 KB (or a
		// transaction over 4 MB). Everything else the store builds itself.
		return fault.Wrap(fault.TooLarge, err, "%s: the record is over DynamoDB's 400 KB item limit", what)
	}
	if concurrentChange(err) {
		return fault.Wrap(fault.Transient, err, "%s: a concurrent change, try again", what)
	}
	return fault.FromAWS(err, what)
}

// concurrentChange reports a transaction refused for another's change to the same items, or for
// a throttled item in it.
func concurrentChange(err error) bool {
	if fault.AWSCode(err) == "TransactionConflictException" {
		return true
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			switch strv(r.Code) {
			case "TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded":
				return true
			}
		}
	}
	return false
}

func strv(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// isCondFailed reports a ConditionalCheckFailedException of a single-item write.
func isCondFailed(err error) (*types.ConditionalCheckFailedException, bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf, true
	}
	return nil, false
}

// txFailed gives, for a transaction cancelled by condition checks, which of its items failed.
func txFailed(err error) (failed []bool, ok bool) {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil, false
	}
	hit := false
	failed = make([]bool, len(tce.CancellationReasons))
	for i, r := range tce.CancellationReasons {
		if strv(r.Code) == "ConditionalCheckFailed" {
			failed[i], hit = true, true
		}
	}
	return failed, hit
}

func notFound(what, id string) error {
	return fault.New(fault.NotFound, "%s %s not found", what, id)
}

func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// NewFromConfig is a store over the table named table with a DynamoDB client made from cfg (which
// finds a local endpoint through AWS_ENDPOINT_URL_DYNAMODB, as the SDKs do).
func NewFromConfig(cfg awsv2.Config, table string, sealer Sealer, opts ...Option) *Store {
	return New(dynamodb.NewFromConfig(cfg), table, sealer, opts...)
}
