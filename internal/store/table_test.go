package store_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
)

func TestEnsureTable(t *testing.T) {
	db := ddblocal.Client(t)
	name := "sinew-ensure-" + t.Name()
	for range 2 { // the second call finds the table and leaves it
		if err := store.EnsureTable(ctx(), db, name); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _, _ = db.DeleteTable(ctx(), &dynamodb.DeleteTableInput{TableName: &name}) })
	d, err := db.DescribeTable(ctx(), &dynamodb.DescribeTableInput{TableName: &name})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Table.KeySchema) != 2 || *d.Table.KeySchema[0].AttributeName != store.AttrPK {
		t.Errorf("key schema %+v", d.Table.KeySchema)
	}
	if err := store.CreateTable(ctx(), db, name); err == nil {
		t.Error("CreateTable of an existing table succeeded")
	}
}
