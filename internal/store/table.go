package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute names of the table's keys, its one index and its TTL. The CDK and local mode read them
// from here (through TableSpec), so every place that makes the table agrees on them.
const (
	AttrPK     = "pk"
	AttrSK     = "sk"
	AttrGSI1PK = "gsi1pk"
	AttrGSI1SK = "gsi1sk"
	// AttrTTL holds epoch seconds; DynamoDB's TTL removes the item some time after that instant, so
	// readers also compare it with the clock and treat a passed item as gone.
	AttrTTL = "ttl"
	// GSI1 serves the two lists that cross partitions: a developer's executions, newest first, and a
	// developer's function calls by status (GET /calls?status=pending). It is sparse: only those
	// items carry gsi1pk.
	GSI1 = "gsi1"
	// GSI2 holds the executions not yet final, across developers, for the sweep that settles those
	// whose Step Functions execution ended without them (open.go). Sparse, keys only: a record
	// leaves it in the write that makes it final, and nothing else on it is ever written to it.
	GSI2       = "gsi2"
	AttrGSI2PK = "gsi2pk"
	AttrGSI2SK = "gsi2sk"
)

// gsi1Attributes are the attributes GSI1 projects besides the keys: what its two lists decode
// (ListExecutions: decodeExec; ListCalls: decodeCall and its filter on exp). Every write that
// changes a projected attribute is also an index write, sized by what the index holds, so what the
// lists never read stays out: an execution's claim (which holds a whole run's outcome, beside the
// output, and is rewritten as a long run renews it), kind, and a call's ttl.
var gsi1Attributes = []string{attrDoc, attrStatus, attrUpdated, attrOutput, attrError, attrFirstState, attrToken, attrExp}

// TableSpec is the definition of sinew's one table: on-demand billing, string keys pk/sk, the
// sparse index GSI1 (projecting gsi1Attributes), the sparse keys-only index GSI2, and TTL on
// AttrTTL (set after creation with UpdateTimeToLive; see TTLSpec). Encryption at rest with a key
// of its own is the CDK's concern.
func TableSpec(name string) *dynamodb.CreateTableInput {
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(AttrPK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(AttrSK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(AttrGSI1PK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(AttrGSI1SK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(AttrGSI2PK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(AttrGSI2SK), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(AttrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(AttrSK), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String(GSI1),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(AttrGSI1PK), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(AttrGSI1SK), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: slices.Clone(gsi1Attributes)},
		}, gsi2Spec()},
	}
}

// gsi2Spec is GSI2's definition.
func gsi2Spec() types.GlobalSecondaryIndex {
	return types.GlobalSecondaryIndex{
		IndexName: aws.String(GSI2),
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(AttrGSI2PK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(AttrGSI2SK), KeyType: types.KeyTypeRange},
		},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
	}
}

// TTLSpec is the TTL setting of the table named name.
func TTLSpec(name string) *dynamodb.UpdateTimeToLiveInput {
	return &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(AttrTTL),
			Enabled:       aws.Bool(true),
		},
	}
}

// AdminAPI is the part of the DynamoDB client that makes and removes tables: local mode and tests
// use it; the deployed table is made by the CDK from the same TableSpec.
type AdminAPI interface {
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
	UpdateTable(context.Context, *dynamodb.UpdateTableInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error)
	DeleteTable(context.Context, *dynamodb.DeleteTableInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error)
}

// CreateTable makes the table named name from TableSpec, waits until it is active and turns TTL on.
// An existing table is an error: callers that want "create if missing" check first.
func CreateTable(ctx context.Context, c AdminAPI, name string) error {
	if _, err := c.CreateTable(ctx, TableSpec(name)); err != nil {
		return fmt.Errorf("create table %s: %w", name, err)
	}
	w := dynamodb.NewTableExistsWaiter(c, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 50 * time.Millisecond
		o.MaxDelay = time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 2*time.Minute); err != nil {
		return fmt.Errorf("wait for table %s: %w", name, err)
	}
	if _, err := c.UpdateTimeToLive(ctx, TTLSpec(name)); err != nil {
		return fmt.Errorf("enable TTL on %s: %w", name, err)
	}
	return nil
}

// EnsureTable makes the table named name unless it exists (local mode starts on a DynamoDB Local
// that may already hold it), and adds GSI2 to a table made before it had one. The records made
// before stay out of GSI2 (the sweep does not see them; reading one still settles it).
func EnsureTable(ctx context.Context, c AdminAPI, name string) error {
	d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	var nf *types.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return CreateTable(ctx, c, name)
	case err != nil:
		return fmt.Errorf("describe table %s: %w", name, err)
	}
	for _, g := range d.Table.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) == GSI2 {
			return nil
		}
	}
	g := gsi2Spec()
	_, err = c.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(AttrGSI2PK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(AttrGSI2SK), AttributeType: types.ScalarAttributeTypeS},
		},
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
			IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection}}},
	})
	if err != nil {
		return fmt.Errorf("add %s to table %s: %w", GSI2, name, err)
	}
	return waitIndexActive(ctx, c, name, GSI2)
}

// waitIndexActive waits until the table's index is ACTIVE (DynamoDB Local's are at once).
func waitIndexActive(ctx context.Context, c AdminAPI, table, index string) error {
	for {
		d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", table, err)
		}
		for _, g := range d.Table.GlobalSecondaryIndexes {
			if aws.ToString(g.IndexName) == index && g.IndexStatus == types.IndexStatusActive {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for index %s of %s: %w", index, table, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
