package store

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
)

// Secret is a developer secret as listed: its value is never answered by the API.
type Secret struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Compiled on first use: a counted repetition compiles to hundreds of allocations, paid at every
// Lambda cold start otherwise.
var secretNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`) })

func secretKey(dev, name string) itemKey { return itemKey{devPK(dev), "SECRET#" + name} }

func secretEncCtx(dev, name string) map[string]string {
	return map[string]string{"developer": dev, "owner": "secret", "tool": name}
}

func checkSecretName(name string) error {
	if !secretNameRE().MatchString(name) {
		return fault.Invalid("name", "a secret's name must match ^[A-Za-z_][A-Za-z0-9_]{0,63}$ (it is referenced as \"$ secrets.NAME\")")
	}
	return nil
}

// PutSecret seals value under {developer, "secret", name} and stores it, replacing any value the
// name had; its description stays.
func (s *Store) PutSecret(ctx context.Context, dev, name string, value []byte) (*Secret, error) {
	return s.PutSecretDescribed(ctx, dev, name, value, nil)
}

// PutSecretDescribed is PutSecret that also sets the secret's description (nil: left as it is).
func (s *Store) PutSecretDescribed(ctx context.Context, dev, name string, value []byte, description *string) (*Secret, error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if err := checkSecretName(name); err != nil {
		return nil, err
	}
	if len(value) > 64<<10 {
		return nil, fault.New(fault.TooLarge, "a secret is at most 64 KiB")
	}
	sealed, err := s.sealer.Seal(ctx, secretEncCtx(dev, name), value)
	if err != nil {
		return nil, wrapf(err, "seal secret %s", name)
	}
	now := s.clock().Format(time.RFC3339Nano)
	// An update, not a put: a replaced secret keeps its first creation time without a read.
	expr := "SET #d = :d, #k = :k, #u = :u, #c = if_not_exists(#c, :u)"
	names := map[string]string{"#d": attrData, "#k": attrKind, "#u": attrUpdated, "#c": "created"}
	vals := map[string]types.AttributeValue{":d": &types.AttributeValueMemberB{Value: sealed}, ":k": str("secret"), ":u": str(now)}
	if description != nil {
		expr, names["#desc"], vals[":desc"] = expr+", #desc = :desc", "description", str(*description)
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: secretKey(dev, name).av(), UpdateExpression: &expr,
		ExpressionAttributeNames: names, ExpressionAttributeValues: vals, ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		return nil, dbErr(err, "store secret")
	}
	return decodeSecret(out.Attributes)
}

// OpenSecret reads and opens a secret's value: for executors only, never for an API answer.
func (s *Store) OpenSecret(ctx context.Context, dev, name string) ([]byte, error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if err := checkSecretName(name); err != nil {
		return nil, err
	}
	it, err := s.get(ctx, secretKey(dev, name), "secret")
	if err != nil {
		return nil, err
	}
	b, _ := it[attrData].(*types.AttributeValueMemberB)
	if it == nil || b == nil {
		return nil, notFound("secret", name)
	}
	pt, err := s.sealer.Open(ctx, secretEncCtx(dev, name), b.Value)
	return pt, wrapf(err, "open secret %s", name)
}

// ListSecrets lists the developer's secrets by name, without values.
func (s *Store) ListSecrets(ctx context.Context, dev string, p Page) (*List[Secret], error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	return listPage(ctx, s, pageQuery{part: devPK(dev), prefix: "SECRET#", forward: true}, p, "secrets", decodeSecret)
}

func decodeSecret(it map[string]types.AttributeValue) (*Secret, error) {
	c, _ := time.Parse(time.RFC3339Nano, getS(it, "created"))
	u, _ := time.Parse(time.RFC3339Nano, getS(it, attrUpdated))
	return &Secret{Name: strings.TrimPrefix(getS(it, AttrSK), "SECRET#"), Description: getS(it, "description"), CreatedAt: c, UpdatedAt: u}, nil
}

// DeleteSecret deletes a secret; NotFound when there is none.
func (s *Store) DeleteSecret(ctx context.Context, dev, name string) error {
	if err := checkDev(dev); err != nil {
		return err
	}
	if err := checkSecretName(name); err != nil {
		return err
	}
	return s.deleteIfExists(ctx, secretKey(dev, name), "secret", name)
}

// Compiled on first use: a counted repetition compiles to hundreds of allocations, paid at every
// Lambda cold start otherwise.
var flagNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`) })

func flagKey(dev, name string) itemKey { return itemKey{devPK(dev), "FLAG#" + name} }

// ParseFlagDefaults reads SINEW_FLAG_DEFAULTS: "name=true,name=false".
func ParseFlagDefaults(s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		b, err := strconv.ParseBool(strings.TrimSpace(val))
		if !ok || err != nil || !flagNameRE().MatchString(name) {
			return nil, fault.Invalid("SINEW_FLAG_DEFAULTS", "SINEW_FLAG_DEFAULTS must be name=true|false pairs separated by commas; %q is not", part)
		}
		out[name] = b
	}
	return out, nil
}

// Flags answers the developer's flags: defaults (from SINEW_FLAG_DEFAULTS) overridden by what the
// developer set.
func (s *Store) Flags(ctx context.Context, dev string, defaults map[string]bool) (map[string]bool, error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	items, err := s.queryAll(ctx, devPK(dev), "FLAG#", false)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(defaults)+len(items))
	for k, v := range defaults {
		out[k] = v
	}
	for _, it := range items {
		out[strings.TrimPrefix(getS(it, AttrSK), "FLAG#")] = getBool(it, "value")
	}
	return out, nil
}

// SetFlag sets one of the developer's flags.
func (s *Store) SetFlag(ctx context.Context, dev, name string, value bool) error {
	if err := checkDev(dev); err != nil {
		return err
	}
	if !flagNameRE().MatchString(name) {
		return fault.Invalid("name", "a flag's name must match ^[a-z][a-z0-9_]{0,63}$")
	}
	item := flagKey(dev, name).av()
	item[attrKind], item["value"], item[attrUpdated] = str("flag"), boolv(value), str(s.clock().Format(time.RFC3339Nano))
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item})
	return dbErr(err, "set flag")
}
