package ddblocal_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
)

// TestSharedServerLoopbackAndCORS checks the instance Main started, with -sharedDb.
func TestSharedServerLoopbackAndCORS(t *testing.T) {
	if os.Getenv(ddblocal.EnvEndpoint) != "" {
		t.Skipf("the endpoint is given by %s: its process is not this binary's to check (TestIsolatedServer checks the launcher)", ddblocal.EnvEndpoint)
	}
	t.Run("loopback only", func(t *testing.T) { checkLoopbackOnly(t, ddblocal.Endpoint(t)) })
	t.Run("no CORS", func(t *testing.T) { checkNoCORS(t, ddblocal.Endpoint(t)) })
}

// TestIsolatedServer takes a data directory of a -sharedDb server through AdoptSharedDB to an
// isolated server, where key A's tables are not key B's, and through a restart.
func TestIsolatedServer(t *testing.T) {
	const keyA, keyB = "AKIDA1", "AKIDB2"
	ctx := context.Background()
	dir := t.TempDir()
	old, err := ddblocal.StartWith(ctx, ddblocal.Options{DBPath: dir, Own: true})
	if err != nil {
		t.Fatal(err)
	}
	createWithItem(t, ddblocal.NewClient(old.Endpoint()), "from-shared-db")
	old.Close()
	if moved, err := ddblocal.AdoptSharedDB(dir, keyA, ddblocal.Region); err != nil || !moved {
		t.Fatalf("AdoptSharedDB: moved %v, %v; want moved", moved, err)
	}

	s, err := ddblocal.StartWith(ctx, ddblocal.Options{DBPath: dir, Isolated: true, Own: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	a := ddblocal.NewClientWith(s.Endpoint(), credentials.NewStaticCredentialsProvider(keyA, "secret", ""))
	b := ddblocal.NewClientWith(s.Endpoint(), credentials.NewStaticCredentialsProvider(keyB, "secret", ""))
	// Waiting for the server opened no database: the files are the adopted one alone.
	if got, want := fileNames(t, dir), []string{ddblocal.IsolatedDBFile(keyA, ddblocal.Region)}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	createWithItem(t, a, "made-with-a")

	t.Run("loopback only", func(t *testing.T) { checkLoopbackOnly(t, s.Endpoint()) })
	t.Run("no CORS", func(t *testing.T) { checkNoCORS(t, s.Endpoint()) })
	t.Run("before restart", func(t *testing.T) { checkTables(t, a, b) })
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	t.Run("after restart", func(t *testing.T) { checkTables(t, a, b) })
	t.Run("loopback only after restart", func(t *testing.T) { checkLoopbackOnly(t, s.Endpoint()) })
}

// checkTables checks that a sees both tables and their items and b sees neither.
func checkTables(t *testing.T, a, b *dynamodb.Client) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		c       *dynamodb.Client
		visible bool
	}{{"key A", a, true}, {"key B", b, false}} {
		t.Run(tc.name, func(t *testing.T) {
			lt, err := tc.c.ListTables(ctx, &dynamodb.ListTablesInput{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{}
			if tc.visible {
				want = []string{"from-shared-db", "made-with-a"}
			}
			if !slices.Equal(append([]string{}, lt.TableNames...), want) {
				t.Errorf("tables %v, want %v", lt.TableNames, want)
			}
			for _, table := range []string{"from-shared-db", "made-with-a"} {
				got, err := tc.c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: itemKey()})
				var nf *types.ResourceNotFoundException
				switch {
				case tc.visible && (err != nil || got.Item == nil):
					t.Errorf("GetItem on %s: item %v, %v; want the item", table, got, err)
				case !tc.visible && !errors.As(err, &nf):
					t.Errorf("GetItem on %s: %v, want ResourceNotFoundException", table, err)
				}
			}
		})
	}
}

func itemKey() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		store.AttrPK: &types.AttributeValueMemberS{Value: "DEV#x"}, store.AttrSK: &types.AttributeValueMemberS{Value: "A"},
	}
}

// createWithItem makes table name with c and puts one item in it.
func createWithItem(t *testing.T, c *dynamodb.Client, name string) {
	t.Helper()
	ctx := context.Background()
	if err := store.CreateTable(ctx, c, name); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: itemKey()}); err != nil {
		t.Fatal(err)
	}
}
