package store_test

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"sinew/internal/fault"
	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
)

// The store against DynamoDB Local, which this package's TestMain starts (a missing DynamoDB Local
// fails the test binary with how to install it): a table made from the store's own spec, an agent
// stored for one developer, read back and listed, and the same id asked for by another developer,
// who finds nothing, since every key starts with the developer id.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	endpoint, err := ddblocal.SharedEndpoint()
	if err != nil {
		fmt.Println(err)
		return
	}
	db := ddblocal.NewClient(endpoint)
	table := fmt.Sprintf("sinew-example-%d", time.Now().UnixNano())
	if err := store.CreateTable(ctx, db, table); err != nil {
		fmt.Println(err)
		return
	}
	defer db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	s := store.New(db, table, nil)

	a, err := s.CreateAgent(ctx, "dev-a", store.Agent{Name: "helper", Metadata: map[string]any{"team": "docs"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	got, err := s.GetAgent(ctx, "dev-a", a.ID)
	fmt.Println(got.Name, got.Metadata["team"], err)
	list, err := s.ListAgents(ctx, "dev-a", store.Page{})
	fmt.Println(len(list.Items), list.Items[0].ID == a.ID, list.NextCursor == nil, err)

	_, err = s.GetAgent(ctx, "dev-b", a.ID)
	fmt.Println(fault.KindOf(err))
	_, err = s.CreateAgent(ctx, "dev-a", store.Agent{})
	fmt.Println(fault.KindOf(err), fault.FieldOf(err))
	// Output:
	// helper docs <nil>
	// 1 true true <nil>
	// Sinew.NotFound
	// Sinew.InvalidInput name
}
