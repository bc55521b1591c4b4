package store

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// Native attributes besides the keys.
const (
	attrDoc      = "doc"      // S: the record as JSON
	attrVer      = "ver"      // N: version, for optimistic concurrency
	attrDeleting = "deleting" // BOOL: the owner is being deleted
	attrSealed   = "sealed"   // M of B: sealed setup values, one per setting (see sealSetup)
	attrStatus   = "st"       // S: status of executions and calls
	attrExp      = "exp"      // N: epoch seconds a call expires (its wait ends)
	attrToken    = "token"    // S: a call's task token
	attrData     = "data"     // B: payload chunk bytes
	attrKind     = "kind"     // S: the item kind, for cascades
)

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func num(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}
func boolv(v bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: v} }

func getS(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func getN(item map[string]types.AttributeValue, name string) int64 {
	if v, ok := item[name].(*types.AttributeValueMemberN); ok {
		n, _ := strconv.ParseInt(v.Value, 10, 64)
		return n
	}
	return 0
}

func getBool(item map[string]types.AttributeValue, name string) bool {
	v, ok := item[name].(*types.AttributeValueMemberBOOL)
	return ok && v.Value
}

func getSealed(item map[string]types.AttributeValue) map[string][]byte {
	m, ok := item[attrSealed].(*types.AttributeValueMemberM)
	if !ok {
		return nil
	}
	out := make(map[string][]byte, len(m.Value))
	for k, v := range m.Value {
		if b, ok := v.(*types.AttributeValueMemberB); ok {
			out[k] = b.Value
		}
	}
	return out
}

func sealedAV(m map[string][]byte) types.AttributeValue {
	av := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		av[k] = &types.AttributeValueMemberB{Value: v}
	}
	return &types.AttributeValueMemberM{Value: av}
}

// encodeDoc is v as the JSON doc attribute.
func encodeDoc(v any) (types.AttributeValue, error) {
	b, err := jsonv.Encode(v)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "the record cannot be written as JSON")
	}
	return str(string(b)), nil
}

// decodeDoc reads the doc attribute into v, keeping numbers exact (json.Number, normalised by the
// records' normalize methods into jsonv's int64/float64).
func decodeDoc(item map[string]types.AttributeValue, v any) error {
	d := json.NewDecoder(bytes.NewReader([]byte(getS(item, attrDoc))))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return fault.Wrap(fault.Internal, err, "stored record %s/%s is not valid JSON", getS(item, AttrPK), getS(item, AttrSK))
	}
	return nil
}

// normMap normalises a free-form map decoded with UseNumber.
func normMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return jsonv.Normalize(m).(map[string]any)
}

func (s *Store) get(ctx context.Context, k itemKey, what string) (map[string]types.AttributeValue, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: k.av(), ConsistentRead: awsv2.Bool(true)})
	if err != nil {
		return nil, dbErr(err, "read "+what)
	}
	return out.Item, nil
}

// batchGet reads keys (at most 100) in one BatchGetItem, consistently, and answers them by key.
// UnprocessedKeys (throttling) are read again; only that costs a second request.
func (s *Store) batchGet(ctx context.Context, keys []itemKey, projection string, names map[string]string) (map[itemKey]map[string]types.AttributeValue, error) {
	req := make([]map[string]types.AttributeValue, 0, len(keys))
	seen := map[itemKey]bool{}
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			req = append(req, k.av())
		}
	}
	ka := types.KeysAndAttributes{Keys: req, ConsistentRead: awsv2.Bool(true)}
	if projection != "" {
		ka.ProjectionExpression = &projection
		ka.ExpressionAttributeNames = names
	}
	in := &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{s.table: ka}}
	got := make(map[itemKey]map[string]types.AttributeValue, len(keys))
	for attempt := 0; ; attempt++ {
		out, err := s.db.BatchGetItem(ctx, in)
		if err != nil {
			return nil, dbErr(err, "read items")
		}
		for _, it := range out.Responses[s.table] {
			got[itemKey{getS(it, AttrPK), getS(it, AttrSK)}] = it
		}
		left, ok := out.UnprocessedKeys[s.table]
		if !ok || len(left.Keys) == 0 {
			return got, nil
		}
		if attempt == 5 {
			return nil, fault.New(fault.Transient, "read items: DynamoDB is busy, try again")
		}
		if err := sleep(ctx, time.Duration(20<<attempt)*time.Millisecond); err != nil {
			return nil, dbErr(err, "read items")
		}
		in = &dynamodb.BatchGetItemInput{RequestItems: out.UnprocessedKeys}
	}
}

// batchDelete deletes keys in BatchWriteItem requests of 25, retrying unprocessed ones.
func (s *Store) batchDelete(ctx context.Context, keys []itemKey) error {
	for len(keys) > 0 {
		n := min(25, len(keys))
		reqs := make([]types.WriteRequest, 0, n)
		for _, k := range keys[:n] {
			reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k.av()}})
		}
		keys = keys[n:]
		if err := s.batchWrite(ctx, reqs); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) batchWrite(ctx context.Context, reqs []types.WriteRequest) error {
	in := &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.table: reqs}}
	for attempt := 0; ; attempt++ {
		out, err := s.db.BatchWriteItem(ctx, in)
		if err != nil {
			return dbErr(err, "write items")
		}
		if len(out.UnprocessedItems[s.table]) == 0 {
			return nil
		}
		if attempt == 8 {
			return fault.New(fault.Transient, "write items: DynamoDB is busy, try again")
		}
		if err := sleep(ctx, time.Duration(20<<attempt)*time.Millisecond); err != nil {
			return dbErr(err, "write items")
		}
		in = &dynamodb.BatchWriteItemInput{RequestItems: out.UnprocessedItems}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// queryAll reads every item of partition pk whose sk starts with prefix (keys only when keysOnly).
func (s *Store) queryAll(ctx context.Context, pk, prefix string, keysOnly bool) ([]map[string]types.AttributeValue, error) {
	in := &dynamodb.QueryInput{
		TableName:                 &s.table,
		KeyConditionExpression:    awsv2.String("#pk = :pk AND begins_with(#sk, :pre)"),
		ExpressionAttributeNames:  map[string]string{"#pk": AttrPK, "#sk": AttrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk), ":pre": str(prefix)},
		ConsistentRead:            awsv2.Bool(true),
	}
	if prefix == "" { // DynamoDB refuses begins_with an empty string
		in.KeyConditionExpression = awsv2.String("#pk = :pk")
		delete(in.ExpressionAttributeNames, "#sk")
		delete(in.ExpressionAttributeValues, ":pre")
	}
	if keysOnly {
		in.ProjectionExpression = awsv2.String("#pk, #sk, #kind")
		in.ExpressionAttributeNames["#sk"], in.ExpressionAttributeNames["#kind"] = AttrSK, attrKind
	}
	var items []map[string]types.AttributeValue
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, dbErr(err, "list items")
		}
		items = append(items, out.Items...)
		if len(out.LastEvaluatedKey) == 0 {
			return items, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// ---- pagination ----

// Page asks for one page of a list: Limit 1..100 (0 means 20), Cursor from the previous page's
// NextCursor ("" for the first page).
type Page struct {
	Limit  int
	Cursor string
}

// List is one page of items; NextCursor is nil on the last page.
type List[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// Default and largest page sizes.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

func (p Page) limit() (int32, error) {
	switch {
	case p.Limit == 0:
		return DefaultLimit, nil
	case p.Limit < 1 || p.Limit > MaxLimit:
		return 0, fault.Invalid("limit", "limit must be between 1 and %d", MaxLimit)
	}
	return int32(p.Limit), nil
}

// cursor wraps a LastEvaluatedKey (all of whose attributes are strings) as URL-safe base64 JSON.
func encodeCursor(lek map[string]types.AttributeValue) *string {
	if len(lek) == 0 {
		return nil
	}
	m := make(map[string]string, len(lek))
	for k := range lek {
		m[k] = getS(lek, k)
	}
	b, _ := json.Marshal(m)
	c := base64.RawURLEncoding.EncodeToString(b)
	return &c
}

// decodeCursor unwraps a cursor and checks it belongs to the query it is given to: its partition
// (which starts with the developer) must be the query's, so a cursor can never open another
// developer's, or another list's, items.
func decodeCursor(c string, partAttr, part, sortAttr, prefix string) (map[string]types.AttributeValue, error) {
	if c == "" {
		return nil, nil
	}
	bad := fault.Invalid("cursor", "cursor is not one this list gave")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, bad
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil || m[partAttr] != part || !strings.HasPrefix(m[sortAttr], prefix) || len(m) > 4 {
		return nil, bad
	}
	lek := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		switch k {
		case AttrPK, AttrSK, AttrGSI1PK, AttrGSI1SK:
			lek[k] = str(v)
		default:
			return nil, bad
		}
	}
	return lek, nil
}

// pageQuery is one page of a Query. index is "" or GSI1; the key condition is partition = part and
// sort key starting with prefix; forward false gives the newest first.
type pageQuery struct {
	index   string
	part    string
	prefix  string
	forward bool
	filter  string
	names   map[string]string
	values  map[string]types.AttributeValue
}

func (s *Store) queryPage(ctx context.Context, q pageQuery, p Page, what string) ([]map[string]types.AttributeValue, *string, error) {
	limit, err := p.limit()
	if err != nil {
		return nil, nil, err
	}
	partAttr, sortAttr := AttrPK, AttrSK
	if q.index == GSI1 {
		partAttr, sortAttr = AttrGSI1PK, AttrGSI1SK
	}
	start, err := decodeCursor(p.Cursor, partAttr, q.part, sortAttr, q.prefix)
	if err != nil {
		return nil, nil, err
	}
	names := map[string]string{"#p": partAttr, "#s": sortAttr}
	values := map[string]types.AttributeValue{":p": str(q.part), ":pre": str(q.prefix)}
	keyCond := "#p = :p AND begins_with(#s, :pre)"
	if q.prefix == "" { // DynamoDB refuses begins_with an empty string
		keyCond = "#p = :p"
		delete(names, "#s")
		delete(values, ":pre")
	}
	for k, v := range q.names {
		names[k] = v
	}
	for k, v := range q.values {
		values[k] = v
	}
	in := &dynamodb.QueryInput{
		TableName:                 &s.table,
		KeyConditionExpression:    &keyCond,
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          awsv2.Bool(q.forward),
		// One more than asked: when it comes back there is a next page, so the last page never
		// ends with a cursor to an empty one.
		Limit:             awsv2.Int32(limit + 1),
		ExclusiveStartKey: start,
	}
	if q.filter != "" {
		in.FilterExpression = &q.filter
	}
	if q.index != "" {
		in.IndexName = &q.index
	} else {
		in.ConsistentRead = awsv2.Bool(true)
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, nil, dbErr(err, "list "+what)
	}
	items := out.Items
	if len(items) > int(limit) {
		items = items[:limit]
		last := items[limit-1]
		lek := map[string]types.AttributeValue{AttrPK: last[AttrPK], AttrSK: last[AttrSK]}
		if q.index == GSI1 {
			lek[AttrGSI1PK], lek[AttrGSI1SK] = last[AttrGSI1PK], last[AttrGSI1SK]
		}
		return items, encodeCursor(lek), nil
	}
	// Fewer items than asked with a LastEvaluatedKey: a filter or the 1 MB page limit cut the page.
	return items, encodeCursor(out.LastEvaluatedKey), nil
}

func ttlOf(t time.Time) types.AttributeValue { return num(t.Unix()) }

// normAny normalises a free-form value decoded with UseNumber.
func normAny(v any) any { return jsonv.Normalize(v) }

// listPage is one page of a Query, each item decoded by decode.
func listPage[T any](ctx context.Context, s *Store, q pageQuery, p Page, what string, decode func(map[string]types.AttributeValue) (*T, error)) (*List[T], error) {
	items, next, err := s.queryPage(ctx, q, p, what)
	if err != nil {
		return nil, err
	}
	out := &List[T]{Items: make([]T, 0, len(items)), NextCursor: next}
	for _, it := range items {
		v, err := decode(it)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *v)
	}
	return out, nil
}
