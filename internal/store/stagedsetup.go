package store

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// StagedSetupTTL is how long a staged setup outlives a process that dies before dropping it.
const StagedSetupTTL = time.Hour

// StageSetup seals an integration setup for an owner under a new tool id that no tool holds, for
// one call through an executor that reads it by that id (MergeSources), as it reads a stored
// tool's: an import lists a remote server's tools with a setup the caller gave, which only the
// executors may open. The caller drops it afterwards (DropStagedSetup); its TTL removes what a
// crash leaves. It answers the id.
func (s *Store) StageSetup(ctx context.Context, dev string, o Owner, setup map[string]any) (string, error) {
	if err := checkDev(dev); err != nil {
		return "", err
	}
	if err := checkOwner(o, OwnerAgent, OwnerTask); err != nil {
		return "", err
	}
	id, owner := newID(), ownerTag(o.Kind, o.ID)
	sealed := map[string][]byte{}
	err := s.sealSetup(ctx, setup, nil, sealed, toolSetupEntry,
		func(k string) map[string]string { return toolSetupEncCtx(dev, owner, id, k) }, "setup")
	if err != nil {
		return "", err
	}
	item := toolSetupKey(dev, id).av()
	item[attrSealed], item[attrOwner], item[attrKind] = sealedAV(sealed), str(owner), str("toolsetup")
	item[AttrTTL] = ttlOf(s.clock().Add(StagedSetupTTL))
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item})
	return id, dbErr(err, "stage setup")
}

// DropStagedSetup deletes a setup StageSetup made; one already gone is no error.
func (s *Store) DropStagedSetup(ctx context.Context, dev, id string) error {
	if err := checkIDs(dev, "tool_id", id); err != nil {
		return err
	}
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: toolSetupKey(dev, id).av()})
	return dbErr(err, "drop staged setup")
}
