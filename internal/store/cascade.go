package store

import (
	"context"
	"strings"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"sinew/internal/fault"
)

// deleteOwner deletes an agent, task, session or user and everything under it, in the order the
// package comment gives.
func (s *Store) deleteOwner(ctx context.Context, dev string, o Owner) error {
	// Owners under this one (an agent's tasks and sessions) go first, each whole, while this one
	// still stands: if the delete stops here, what is left is reachable through it as before, and
	// repeating the delete finishes the job.
	if err := s.deleteSubOwners(ctx, dev, o); err != nil {
		return err
	}
	// From here on the owner reads as NotFound and nothing can be created under it.
	item, err := s.markDeleting(ctx, ownerItem(dev, o), string(o.Kind), o.ID)
	if err != nil {
		return err
	}
	// Tasks or sessions created between the first pass and the mark.
	if err := s.deleteSubOwners(ctx, dev, o); err != nil {
		return err
	}
	children, err := s.queryAll(ctx, ownerPK(dev, o), "", true)
	if err != nil {
		return err
	}
	var keys []itemKey
	for _, c := range children {
		k := itemKey{getS(c, AttrPK), getS(c, AttrSK)}
		if strings.HasPrefix(k.sk, "TOOL#") {
			keys = append(keys, toolSetupKey(dev, getID(k)))
		}
		keys = append(keys, k)
	}
	if err := s.batchDelete(ctx, keys); err != nil {
		return wrapf(err, "delete what is under %s %s", o.Kind, o.ID)
	}
	if _, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: ownerItem(dev, o).av()}); err != nil {
		return dbErr(err, "delete "+string(o.Kind))
	}
	// A task's or session's pointer in its agent's partition goes last: a pointer to nothing is
	// skipped by lists and removed with the agent, while an item without a pointer would be missed.
	if o.Kind == OwnerTask || o.Kind == OwnerSession {
		var rec struct {
			AgentID string `json:"agent_id"`
		}
		if err := decodeDoc(item, &rec); err == nil && rec.AgentID != "" {
			_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: refKey(dev, rec.AgentID, o.Kind, o.ID).av()})
			return dbErr(err, "delete "+string(o.Kind))
		}
	}
	return nil
}

// deleteSubOwners deletes the tasks and sessions an agent points to.
func (s *Store) deleteSubOwners(ctx context.Context, dev string, o Owner) error {
	if o.Kind != OwnerAgent {
		return nil
	}
	for _, kind := range []OwnerKind{OwnerTask, OwnerSession} {
		refs, err := s.queryAll(ctx, ownerPK(dev, o), kind.prefix()+"REF#", true)
		if err != nil {
			return err
		}
		for _, r := range refs {
			id := getID(itemKey{getS(r, AttrPK), getS(r, AttrSK)})
			err := s.deleteOwner(ctx, dev, Owner{kind, id})
			if fault.Is(err, fault.NotFound) {
				// Its item is gone (a delete stopped before its pointer): the pointer goes too.
				_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: refKey(dev, o.ID, kind, id).av()})
				err = dbErr(err, "delete "+string(kind))
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteIfExists deletes one item; NotFound when it is not there.
func (s *Store) deleteIfExists(ctx context.Context, k itemKey, what, id string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                &s.table,
		Key:                      k.av(),
		ConditionExpression:      awsv2.String("attribute_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": AttrPK},
	})
	if _, ok := isCondFailed(err); ok {
		return notFound(what, id)
	}
	return dbErr(err, "delete "+what)
}
