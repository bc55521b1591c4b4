package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// Payload limits: Step Functions carries at most 256 KiB per state, so values travel small. A value whose JSON is over InlineLimit travels as a reference; it
// is stored in chunks of ChunkSize, well under DynamoDB's 400 KB item limit (which counts names
// and keys too).
const (
	InlineLimit = 32 << 10
	ChunkSize   = 350_000
	// MaxPayload bounds one stored value; the largest legitimate one (a 2 MB api_call response,
	// base64 in JSON) is well under it.
	MaxPayload = 16 << 20
)

// RefKey is the key of a payload reference: {"sinew:ref": "<ref>", "bytes": N}.
const RefKey = "sinew:ref"

func payloadPK(dev, ref string) string { return devPK(dev) + "#PAYLOAD#" + esc(ref) }

// RefOf gives the reference a value is, if it is one.
func RefOf(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 2 {
		return "", false
	}
	ref, ok := m[RefKey].(string)
	if _, n := m["bytes"]; !ok || !n {
		return "", false
	}
	return ref, true
}

// StoreValue answers v itself when its JSON is at most InlineLimit bytes, and otherwise stores it
// and answers its reference {"sinew:ref", "bytes"}. ttl 0 keeps it until deleted.
func (s *Store) StoreValue(ctx context.Context, dev string, v any, ttl time.Duration) (any, error) {
	b, err := jsonv.Encode(v)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "the value cannot be written as JSON")
	}
	if len(b) <= InlineLimit {
		return v, nil
	}
	ref, err := s.PutPayload(ctx, dev, b, ttl)
	if err != nil {
		return nil, err
	}
	return map[string]any{RefKey: ref, "bytes": int64(len(b))}, nil
}

// LoadValue answers the value a reference stands for, or v itself when it is not a reference.
func (s *Store) LoadValue(ctx context.Context, dev string, v any) (any, error) {
	ref, ok := RefOf(v)
	if !ok {
		return v, nil
	}
	b, err := s.GetPayload(ctx, dev, ref)
	if err != nil {
		return nil, err
	}
	out, err := jsonv.Decode(b)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "stored payload %s is not JSON", ref)
	}
	return out, nil
}

// PutPayload stores data in chunks and answers its reference. The chunks are written first and the
// manifest (size, chunk count, SHA-256) last: a reader needs the manifest, so a write that stops
// half way is never read as a value (its chunks are removed by TTL when one is set).
func (s *Store) PutPayload(ctx context.Context, dev string, data []byte, ttl time.Duration) (string, error) {
	if err := checkDev(dev); err != nil {
		return "", err
	}
	if len(data) > MaxPayload {
		return "", fault.New(fault.TooLarge, "a stored value is at most %d bytes, this one is %d", MaxPayload, len(data))
	}
	ref := newID()
	pk := payloadPK(dev, ref)
	var exp types.AttributeValue
	if ttl > 0 {
		exp = ttlOf(s.clock().Add(ttl))
	}
	var reqs []types.WriteRequest
	n := 0
	for off := 0; off < len(data) || n == 0; off += ChunkSize {
		end := min(off+ChunkSize, len(data))
		item := itemKey{pk, fmt.Sprintf("CHUNK#%05d", n)}.av()
		item[attrData], item[attrKind] = &types.AttributeValueMemberB{Value: data[off:end]}, str("chunk")
		if exp != nil {
			item[AttrTTL] = exp
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		n++
	}
	// BatchWriteItem takes 25 items and 16 MB; chunks are large, so write a few at a time.
	for len(reqs) > 0 {
		k := min(10, len(reqs))
		if err := s.batchWrite(ctx, reqs[:k]); err != nil {
			return "", wrapf(err, "store payload")
		}
		reqs = reqs[k:]
	}
	sum := sha256.Sum256(data)
	man := itemKey{pk, "MANIFEST"}.av()
	man[attrKind], man["bytes"], man["chunks"], man["sha256"] = str("manifest"), num(int64(len(data))), num(int64(n)), str(hex.EncodeToString(sum[:]))
	if exp != nil {
		man[AttrTTL] = exp
	}
	c, nm, v := condNew()
	if _, err := s.db.PutItem(ctx, putInput(s, man, c, nm, v)); err != nil {
		return "", dbErr(err, "store payload")
	}
	return ref, nil
}

// GetPayload reads a stored payload back, checking its size and digest.
func (s *Store) GetPayload(ctx context.Context, dev, ref string) ([]byte, error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if err := checkID("ref", ref); err != nil {
		return nil, err
	}
	items, err := s.queryAll(ctx, payloadPK(dev, ref), "", false)
	if err != nil {
		return nil, err
	}
	var man map[string]types.AttributeValue
	var chunks [][]byte
	for _, it := range items {
		switch sk := getS(it, AttrSK); {
		case sk == "MANIFEST":
			man = it
		case strings.HasPrefix(sk, "CHUNK#"):
			b, _ := it[attrData].(*types.AttributeValueMemberB)
			if b != nil {
				chunks = append(chunks, b.Value) // the Query gives them in sort-key order
			}
		}
	}
	if man == nil || s.ttlPassed(man) {
		return nil, notFound("payload", ref)
	}
	size, n := getN(man, "bytes"), getN(man, "chunks")
	if int64(len(chunks)) != n {
		return nil, fault.New(fault.Internal, "payload %s has %d of its %d chunks", ref, len(chunks), n)
	}
	data := make([]byte, 0, size)
	for _, c := range chunks {
		data = append(data, c...)
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) != size || hex.EncodeToString(sum[:]) != getS(man, "sha256") {
		return nil, fault.New(fault.Internal, "payload %s does not match its manifest", ref)
	}
	return data, nil
}
