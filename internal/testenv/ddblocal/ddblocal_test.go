package ddblocal_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/awscount"
	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

func TestNewTableMatchesSpecAndHasTTL(t *testing.T) {
	ctx := context.Background()
	var n awscount.Counter
	c := ddblocal.Client(t, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, n.Register) })
	if !strings.HasPrefix(ddblocal.Endpoint(t), "http://127.0.0.1:") && !strings.HasPrefix(ddblocal.Endpoint(t), "http://[::1]:") {
		t.Logf("endpoint %s is not loopback (given by %s)", ddblocal.Endpoint(t), ddblocal.EnvEndpoint)
	}
	name := ddblocal.NewTable(t, c)

	d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Table.TableStatus; got != types.TableStatusActive {
		t.Errorf("status %s, want ACTIVE", got)
	}
	var indexes []string
	for _, g := range d.Table.GlobalSecondaryIndexes {
		indexes = append(indexes, aws.ToString(g.IndexName))
	}
	if len(indexes) != 2 || !slices.Contains(indexes, store.GSI1) || !slices.Contains(indexes, store.GSI2) {
		t.Errorf("indexes %v, want %s and %s", indexes, store.GSI1, store.GSI2)
	}
	ttl, err := c.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if ttl.TimeToLiveDescription.TimeToLiveStatus != types.TimeToLiveStatusEnabled ||
		aws.ToString(ttl.TimeToLiveDescription.AttributeName) != store.AttrTTL {
		t.Errorf("TTL %+v, want enabled on %s", ttl.TimeToLiveDescription, store.AttrTTL)
	}

	n.Reset()
	_, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: map[string]types.AttributeValue{
		store.AttrPK: &types.AttributeValueMemberS{Value: "DEV#x"}, store.AttrSK: &types.AttributeValueMemberS{Value: "A"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Ops(); got["PutItem"] != 1 || n.Total() != 1 {
		t.Errorf("counted %v, want one PutItem", got)
	}
}

func TestTablesAreSeparate(t *testing.T) {
	c := ddblocal.Client(t)
	a, b := ddblocal.NewTable(t, c), ddblocal.NewTable(t, c)
	if a == b {
		t.Fatalf("two tables with the same name %s", a)
	}
}

func TestEndpointFromEnvironmentStartsNothing(t *testing.T) {
	t.Setenv(ddblocal.EnvEndpoint, ddblocal.Endpoint(t))
	s, err := ddblocal.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Endpoint() != ddblocal.Endpoint(t) {
		t.Errorf("endpoint %s, want %s", s.Endpoint(), ddblocal.Endpoint(t))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Close of an endpoint it did not start leaves that server running.
	if _, err := ddblocal.Client(t).ListTables(context.Background(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("the shared server stopped: %v", err)
	}
}

func TestMissingJarSaysHowToInstall(t *testing.T) {
	t.Setenv(ddblocal.EnvEndpoint, "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	_, err := ddblocal.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "npm ci") {
		t.Fatalf("error %v, want one that says to run npm ci", err)
	}
}
