package awscount

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/testenv/ddblocal"
)

// TestItemSizeMatchesDynamoDB: itemSize, which prices what a transaction's request shows, agrees
// with the write units DynamoDB Local reports for the same items put alone, on both sides of the
// 1 KB boundaries and for every kind of value.
func TestItemSizeMatchesDynamoDB(t *testing.T) {
	ctx := context.Background()
	db := ddblocal.Client(t)
	tbl := aws.String(ddblocal.NewTable(t, db))
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	key := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": s(pk), "sk": s("A")}
	}
	// "pk"+"k1" (4) and "sk"+"A" (3): 7 bytes of key, so a filler of 1024-7-1 makes the item 1 KB.
	fill := func(pk string, total int) map[string]types.AttributeValue {
		m := key(pk)
		m["f"] = s(strings.Repeat("x", total-itemSize(m)-1))
		return m
	}
	tests := []map[string]types.AttributeValue{
		fill("k1", 1024), fill("k2", 1025), fill("k3", 2048), fill("k4", 2049), fill("k5", 5000),
		func() map[string]types.AttributeValue {
			m := key("k6")
			m["n"], m["big"] = n("12345678901234567890123456789012345678"), n("-0.000123e10")
			m["b"], m["t"], m["z"] = &types.AttributeValueMemberB{Value: make([]byte, 700)}, &types.AttributeValueMemberBOOL{Value: true}, &types.AttributeValueMemberNULL{Value: true}
			m["ss"], m["ns"] = &types.AttributeValueMemberSS{Value: []string{strings.Repeat("a", 150), "b"}}, &types.AttributeValueMemberNS{Value: []string{"1", "22", "333"}}
			m["l"] = &types.AttributeValueMemberL{Value: []types.AttributeValue{s(strings.Repeat("c", 100)), n("7"), &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"in": s("x")}}}}
			m["m"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"a": s(strings.Repeat("d", 60)), "bb": n("3.5")}}
			return m
		}(),
	}
	for _, item := range tests {
		pk := item["pk"].(*types.AttributeValueMemberS).Value
		t.Run(fmt.Sprintf("%s, %d bytes", pk, itemSize(item)), func(t *testing.T) {
			out, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: tbl, Item: item, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := aws.ToFloat64(out.ConsumedCapacity.CapacityUnits), float64((itemSize(item)+1023)/1024); got != want {
				t.Errorf("DynamoDB Local reports %v write units, itemSize gives %v", got, want)
			}
		})
	}
}
