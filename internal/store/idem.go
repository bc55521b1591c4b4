package store

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// IdemRecord is an idempotency record: what a key's first use produced, kept until
// ExpiresAt (TTL).
type IdemRecord struct {
	Key       string    `json:"key"`
	Value     any       `json:"value"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// Raw is the record's stored form as read or written: what TakeOverIdempotency compares
	// against, so that a takeover replaces only the record its caller saw.
	Raw string `json:"-"`
}

func idemKey(dev, key string) itemKey { return itemKey{devPK(dev) + "#IDEM#" + esc(key), "IDEM"} }

func decodeIdem(it map[string]types.AttributeValue) (*IdemRecord, error) {
	var r IdemRecord
	if err := decodeDoc(it, &r); err != nil {
		return nil, err
	}
	r.Value = normAny(r.Value)
	r.Raw = getS(it, attrDoc)
	return &r, nil
}

// PutIdempotency records value under key for ttl if the key has no live record, and answers the
// record that holds: the new one (true), or the one already there (false). A record whose TTL has
// passed but that DynamoDB has not removed yet counts as absent.
func (s *Store) PutIdempotency(ctx context.Context, dev, key string, value any, ttl time.Duration) (*IdemRecord, bool, error) {
	if err := checkDev(dev); err != nil {
		return nil, false, err
	}
	if err := checkOpaque("key", key, 512); err != nil {
		return nil, false, err
	}
	if ttl <= 0 {
		return nil, false, fault.Invalid("ttl", "an idempotency record needs a positive time to live")
	}
	now := s.clock()
	r := IdemRecord{Key: key, Value: value, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	item, err := idemItem(dev, &r)
	if err != nil {
		return nil, false, err
	}
	in := putInput(s, item, "attribute_not_exists(#pk) OR #ttl <= :now",
		map[string]string{"#pk": AttrPK, "#ttl": AttrTTL}, map[string]types.AttributeValue{":now": num(now.Unix())})
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	_, err = s.db.PutItem(ctx, in)
	if ccf, ok := isCondFailed(err); ok {
		old, err := decodeIdem(ccf.Item)
		return old, false, err
	}
	if err != nil {
		return nil, false, dbErr(err, "record idempotency key")
	}
	r.Value, r.Raw = jsonv.Normalize(r.Value), getS(item, attrDoc)
	return &r, true, nil
}

func idemItem(dev string, r *IdemRecord) (map[string]types.AttributeValue, error) {
	doc, err := encodeDoc(r)
	if err != nil {
		return nil, err
	}
	item := idemKey(dev, r.Key).av()
	item[attrDoc], item[attrKind], item[AttrTTL] = doc, str("idem"), ttlOf(r.ExpiresAt)
	return item, nil
}

// UpdateIdempotency replaces the value of a live record (e.g. "running" by the result), keeping
// its expiry; NotFound when there is none.
func (s *Store) UpdateIdempotency(ctx context.Context, dev, key string, value any) (*IdemRecord, error) {
	r, err := s.GetIdempotency(ctx, dev, key)
	if err != nil {
		return nil, err
	}
	return s.ReplaceIdempotency(ctx, dev, key, r, value)
}

// ReplaceIdempotency is UpdateIdempotency for a caller that has the record as it read or wrote it
// (held), whose expiry it keeps: one conditional write, without reading the record first.
func (s *Store) ReplaceIdempotency(ctx context.Context, dev, key string, held *IdemRecord, value any) (*IdemRecord, error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if err := checkOpaque("key", key, 512); err != nil {
		return nil, err
	}
	r := &IdemRecord{Key: key, Value: value, CreatedAt: held.CreatedAt, ExpiresAt: held.ExpiresAt}
	item, err := idemItem(dev, r)
	if err != nil {
		return nil, err
	}
	_, err = s.db.PutItem(ctx, putInput(s, item, "attribute_exists(#pk) AND #ttl > :now",
		map[string]string{"#pk": AttrPK, "#ttl": AttrTTL}, map[string]types.AttributeValue{":now": num(s.clock().Unix())}))
	if _, ok := isCondFailed(err); ok {
		return nil, notFound("idempotency key", key)
	}
	if err != nil {
		return nil, dbErr(err, "update idempotency record")
	}
	r.Value, r.Raw = jsonv.Normalize(r.Value), getS(item, attrDoc)
	return r, nil
}

// WriteIdempotency writes r whole, whatever the key holds: for a record whose only writer the
// caller is (a chat's, under its claim on the session's turn).
func (s *Store) WriteIdempotency(ctx context.Context, dev string, r *IdemRecord) error {
	if err := checkDev(dev); err != nil {
		return err
	}
	if err := checkOpaque("key", r.Key, 512); err != nil {
		return err
	}
	item, err := idemItem(dev, r)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item})
	return dbErr(err, "write idempotency record")
}

// TakeOverIdempotency replaces the value of key's record, keeping its expiry, only if the record
// still holds held (a PutIdempotency's, GetIdempotency's or an earlier takeover's answer): of two
// callers that saw the same record, one takes it (true, with the new record) and the other gets
// false, no error.
func (s *Store) TakeOverIdempotency(ctx context.Context, dev, key string, held *IdemRecord, value any) (*IdemRecord, bool, error) {
	if err := checkDev(dev); err != nil {
		return nil, false, err
	}
	if err := checkOpaque("key", key, 512); err != nil {
		return nil, false, err
	}
	if held == nil || held.Raw == "" {
		return nil, false, fault.New(fault.Internal, "a takeover of idempotency key %s needs the record as read", key)
	}
	r := IdemRecord{Key: key, Value: value, CreatedAt: held.CreatedAt, ExpiresAt: held.ExpiresAt}
	item, err := idemItem(dev, &r)
	if err != nil {
		return nil, false, err
	}
	_, err = s.db.PutItem(ctx, putInput(s, item, "#doc = :raw",
		map[string]string{"#doc": attrDoc}, map[string]types.AttributeValue{":raw": str(held.Raw)}))
	if _, ok := isCondFailed(err); ok {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, dbErr(err, "take over idempotency record")
	}
	r.Value, r.Raw = jsonv.Normalize(r.Value), getS(item, attrDoc)
	return &r, true, nil
}

// GetIdempotency reads a live record; NotFound when there is none or its TTL has passed.
func (s *Store) GetIdempotency(ctx context.Context, dev, key string) (*IdemRecord, error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if err := checkOpaque("key", key, 512); err != nil {
		return nil, err
	}
	it, err := s.get(ctx, idemKey(dev, key), "idempotency record")
	if err != nil {
		return nil, err
	}
	if it == nil || s.ttlPassed(it) {
		return nil, notFound("idempotency key", key)
	}
	return decodeIdem(it)
}

// ReleaseIdempotency deletes the record of key that r (a PutIdempotency's answer) is, told apart by
// its expiry: a record made since by another claim, after r's lapsed, is left alone.
func (s *Store) ReleaseIdempotency(ctx context.Context, dev, key string, r *IdemRecord) error {
	if err := checkDev(dev); err != nil {
		return err
	}
	cond := "#ttl = :ttl"
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: idemKey(dev, key).av(),
		ConditionExpression:       &cond,
		ExpressionAttributeNames:  map[string]string{"#ttl": AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{":ttl": ttlOf(r.ExpiresAt)}})
	if _, ok := isCondFailed(err); ok {
		return nil
	}
	if err != nil {
		return dbErr(err, "release idempotency record")
	}
	return nil
}
