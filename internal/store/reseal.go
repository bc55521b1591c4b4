package store

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
)

// ScanAPI is the Scan of *dynamodb.Client, which only ResealAll needs (so API stays as narrow as
// the request path uses).
type ScanAPI interface {
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// ResealFunc turns a sealed value into its replacement under the same encryption context (the
// KMS envelope's Reseal moves its data key to the key's newest version).
type ResealFunc func(ctx context.Context, encCtx map[string]string, sealed []byte) ([]byte, error)

// ResealCounts is what ResealAll did.
type ResealCounts struct {
	Items    int `json:"items"`    // items holding sealed values
	Values   int `json:"values"`   // sealed values found
	Resealed int `json:"resealed"` // values replaced
	Changed  int `json:"changed"`  // values left alone: rewritten by someone else meanwhile (so already sealed afresh) or gone
	Failed   int `json:"failed"`   // values reseal refused; the first error is returned
}

// ResealAll scans the whole table for sealed values (metadata setup entries of agents, tasks and
// sessions; stored tools' integration.setup; developer secrets) and replaces each with what reseal
// makes of it, under the encryption context it was sealed with. Each write is conditional on the
// value being unchanged, so a concurrent write always wins. A value reseal refuses is counted and
// skipped; the first such error is returned after the scan, naming the item, never a value.
func (s *Store) ResealAll(ctx context.Context, scan ScanAPI, reseal ResealFunc) (ResealCounts, error) {
	var c ResealCounts
	var first error
	fail := func(err error) {
		c.Failed++
		if first == nil {
			first = err
		}
	}
	in := &dynamodb.ScanInput{
		TableName:                &s.table,
		ConsistentRead:           awsv2.Bool(true),
		FilterExpression:         awsv2.String("attribute_exists(#sealed) OR #kind IN (:ts, :sec)"),
		ProjectionExpression:     awsv2.String("#pk, #sk, #sealed, #data, #kind, #owner"),
		ExpressionAttributeNames: map[string]string{"#pk": AttrPK, "#sk": AttrSK, "#sealed": attrSealed, "#data": attrData, "#kind": attrKind, "#owner": attrOwner},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":ts": str("toolsetup"), ":sec": str("secret"),
		},
	}
	for {
		out, err := scan.Scan(ctx, in)
		if err != nil {
			return c, dbErr(err, "scan for sealed values")
		}
		for _, it := range out.Items {
			vals, err := sealedValues(it)
			if err != nil {
				fail(err)
				continue
			}
			if len(vals) == 0 {
				continue
			}
			c.Items++
			for _, v := range vals {
				c.Values++
				nb, err := reseal(ctx, v.encCtx, v.blob)
				if err != nil {
					fail(fmt.Errorf("reseal %s of %s/%s: %w", v.what, getS(it, AttrPK), getS(it, AttrSK), err))
					continue
				}
				ok, err := s.replaceSealed(ctx, it, v, nb)
				switch {
				case err != nil:
					fail(err)
				case ok:
					c.Resealed++
				default:
					c.Changed++
				}
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return c, first
}

// sealedValue is one sealed value of an item: entry is its key in the sealed map ("" for the data
// attribute).
type sealedValue struct {
	entry  string
	what   string
	encCtx map[string]string
	blob   []byte
}

// sealedValues lists an item's sealed values with the contexts they were sealed under, rebuilt
// from the item's key (see the key layout in store.go).
func sealedValues(it map[string]types.AttributeValue) ([]sealedValue, error) {
	pk, sk := getS(it, AttrPK), getS(it, AttrSK)
	bad := fault.New(fault.Internal, "item %s/%s holds sealed values under a key of unknown layout", pk, sk)
	rest, ok := strings.CutPrefix(pk, "DEV#")
	if !ok {
		return nil, bad
	}
	escDev, tail, _ := strings.Cut(rest, "#")
	dev, err := url.PathUnescape(escDev)
	if err != nil {
		return nil, bad
	}
	var out []sealedValue
	m := getSealed(it)
	switch getS(it, attrKind) {
	case "toolsetup":
		// A stored tool's integration.setup: one value per setting.
		id, ok := strings.CutPrefix(tail, "TOOL#")
		if !ok || sk != "SETUP" || len(m) == 0 {
			return nil, bad
		}
		owner := getS(it, attrOwner)
		for entry, b := range m {
			k, ok := strings.CutPrefix(entry, toolSetupPrefix)
			if !ok {
				return nil, bad
			}
			out = append(out, sealedValue{entry: entry, what: "integration.setup." + k,
				encCtx: toolSetupEncCtx(dev, owner, id, k), blob: b})
		}
		return out, nil
	case "secret":
		b, _ := it[attrData].(*types.AttributeValueMemberB)
		name, ok := strings.CutPrefix(sk, "SECRET#")
		if !ok || b == nil || tail != "" {
			return nil, bad
		}
		return []sealedValue{{what: "secret " + name, encCtx: secretEncCtx(dev, name), blob: b.Value}}, nil
	}
	if len(m) == 0 {
		return nil, nil
	}
	// The metadata setup of an agent, task, session or user: one value per (key, tool, setting).
	if tail != "" {
		return nil, bad
	}
	kind, id, _ := strings.Cut(sk, "#")
	var owner OwnerKind
	for _, k := range []OwnerKind{OwnerAgent, OwnerTask, OwnerSession, OwnerUser} {
		if k.prefix() == kind {
			owner = k
		}
	}
	if owner == "" || id == "" {
		return nil, bad
	}
	for entry, b := range m {
		key, tool, k, ok := splitMetaEntry(entry)
		if !ok {
			return nil, bad
		}
		out = append(out, sealedValue{entry: entry, what: "metadata." + key + "." + tool + "." + k,
			encCtx: metaEncCtx(dev, ownerTag(owner, id), key, tool, k), blob: b})
	}
	return out, nil
}

// replaceSealed writes nb in place of v if v is still what the item holds; false when it is not.
func (s *Store) replaceSealed(ctx context.Context, it map[string]types.AttributeValue, v sealedValue, nb []byte) (bool, error) {
	in := &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       itemKey{getS(it, AttrPK), getS(it, AttrSK)}.av(),
		ExpressionAttributeNames:  map[string]string{},
		ExpressionAttributeValues: map[string]types.AttributeValue{":old": &types.AttributeValueMemberB{Value: v.blob}, ":new": &types.AttributeValueMemberB{Value: nb}},
	}
	if v.entry != "" {
		in.UpdateExpression = awsv2.String("SET #s.#e = :new")
		in.ConditionExpression = awsv2.String("#s.#e = :old")
		in.ExpressionAttributeNames["#s"], in.ExpressionAttributeNames["#e"] = attrSealed, v.entry
	} else {
		in.UpdateExpression = awsv2.String("SET #d = :new")
		in.ConditionExpression = awsv2.String("#d = :old")
		in.ExpressionAttributeNames["#d"] = attrData
	}
	_, err := s.db.UpdateItem(ctx, in)
	if _, ok := isCondFailed(err); ok {
		return false, nil
	}
	if err != nil {
		return false, dbErr(err, fmt.Sprintf("write the resealed %s of %s/%s", v.what, getS(it, AttrPK), getS(it, AttrSK)))
	}
	return true, nil
}
