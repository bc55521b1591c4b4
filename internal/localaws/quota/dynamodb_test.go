package quota

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/testenv/ddblocal"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

// An AWS SDK client with the partition quota on its stack, against DynamoDB Local: twice a
// partition's write capacity at once comes through (the SDK retries the throttled ones), each
// item once; a client without it is never throttled.
func TestDynamoDBMiddlewareRetriedBySDK(t *testing.T) {
	l := mustLimits(t, "aws*0.01") // 10 WCU a partition
	retryer := func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = 20; o.MaxBackoff = 2 * time.Second })
	}
	db := ddblocal.Client(t, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, l.DynamoDBMiddleware("pk"))
		o.Retryer = retryer()
	})
	table := ddblocal.NewTable(t, db)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: "hot"}, "sk": &types.AttributeValueMemberS{Value: fmt.Sprint(i)}}})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("put %d lost: %v", i, err)
		}
	}
	if l.Throttled.DynamoDB.Load() == 0 {
		t.Error("no write was throttled at twice the partition's capacity")
	}
	q, err := ddblocal.Client(t).Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), Select: types.SelectCount,
		KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "hot"}}})
	if err != nil || q.Count != 20 {
		t.Errorf("%v items in the partition (%v), want 20", q, err)
	}
}
