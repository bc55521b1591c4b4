package store

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
)

// Agent is an agent. Metadata holds, besides anything else, the merge keys of package merge; the
// values under x-integration-setup and x-api_call-setup are sealed apart and read back as Redacted.
type Agent struct {
	ID              string         `json:"id"`
	Name            string         `json:"name"`
	About           string         `json:"about,omitempty"`
	Model           string         `json:"model,omitempty"`
	Instructions    any            `json:"instructions,omitempty"` // a string or a list of strings (Julep)
	DefaultSettings map[string]any `json:"default_settings,omitempty"`
	Metadata        map[string]any `json:"metadata,omitempty"`
	CreatedAt       time.Time      `json:"created_at"`
	UpdatedAt       time.Time      `json:"updated_at"`
}

func (a *Agent) normalize() {
	a.DefaultSettings, a.Metadata = normMap(a.DefaultSettings), normMap(a.Metadata)
	a.Instructions = normAny(a.Instructions)
}
func (a *Agent) metadata() *map[string]any      { return &a.Metadata }
func (a *Agent) stamp(c, u time.Time)           { a.CreatedAt, a.UpdatedAt = c, u }
func (a *Agent) createdAt() time.Time           { return a.CreatedAt }
func agentKey(dev, id string) itemKey           { return ownerItem(dev, Owner{OwnerAgent, id}) }
func ownerTag(kind OwnerKind, id string) string { return string(kind) + "/" + id }

// CreateAgent stores a new agent with a new id (or the one a has: Julep's create_or_update; an
// agent of that id already is a Conflict) and answers it as the API shows it.
func (s *Store) CreateAgent(ctx context.Context, dev string, a Agent) (*Agent, error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if a.Name == "" {
		return nil, fault.Invalid("name", "name is required")
	}
	if err := givenID(&a.ID, "agent_id"); err != nil {
		return nil, err
	}
	return createRecord(ctx, s, dev, &a, agentKey(dev, a.ID), "agent", OwnerAgent, nil)
}

// GetAgent reads an agent.
func (s *Store) GetAgent(ctx context.Context, dev, id string) (*Agent, error) {
	if err := checkIDs(dev, "agent_id", id); err != nil {
		return nil, err
	}
	o, err := readRecord[Agent](ctx, s, agentKey(dev, id), "agent", id)
	if err != nil {
		return nil, err
	}
	return o.rec, nil
}

// ListAgents lists the developer's agents, newest first.
func (s *Store) ListAgents(ctx context.Context, dev string, p Page) (*List[Agent], error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	return listRecords[Agent](ctx, s, liveQuery(devPK(dev), "AGENT#"), p, "agents")
}

// UpdateAgent applies mutate to the agent and stores the result: PUT and PATCH are both a mutate
// function. mutate sees metadata setup values as Redacted and may leave them so to keep them. The
// id and timestamps are the store's.
func (s *Store) UpdateAgent(ctx context.Context, dev, id string, mutate func(*Agent) error) (*Agent, error) {
	if err := checkIDs(dev, "agent_id", id); err != nil {
		return nil, err
	}
	return updateRecord(ctx, s, dev, agentKey(dev, id), "agent", id, OwnerAgent, func(a *Agent) error {
		if err := mutate(a); err != nil {
			return err
		}
		if a.Name == "" {
			return fault.Invalid("name", "name is required")
		}
		a.ID = id
		return nil
	}, nil)
}

// DeleteAgent deletes an agent and everything under it (see the package comment).
func (s *Store) DeleteAgent(ctx context.Context, dev, id string) error {
	if err := checkIDs(dev, "agent_id", id); err != nil {
		return err
	}
	return s.deleteOwner(ctx, dev, Owner{OwnerAgent, id})
}

// checkIDs checks the developer and one id.
func checkIDs(dev, field, id string) error {
	if err := checkDev(dev); err != nil {
		return err
	}
	return checkID(field, id)
}

// liveQuery lists partition pk's items under prefix, leaving out owners being deleted.
func liveQuery(pk, prefix string) pageQuery {
	return pageQuery{part: pk, prefix: prefix, filter: "attribute_not_exists(#del)", names: map[string]string{"#del": attrDeleting}}
}

// createRecord seals rec's metadata (when it has any), stamps it and writes it if new, with the
// extra transaction items (pointers, owner checks) in the same transaction.
func createRecord[T any, P interface {
	*T
	record
}](ctx context.Context, s *Store, dev string, rec P, k itemKey, what string, kind OwnerKind, extra func(P) ([]txOp, map[string]types.AttributeValue, error)) (*T, error) {
	now := s.clock()
	rec.stamp(now, now)
	var sealed map[string][]byte
	if m := rec.metadata(); m != nil {
		vis, sl, err := s.sealMeta(ctx, dev, ownerTag(kind, getID(k)), *m, nil)
		if err != nil {
			return nil, err
		}
		*m, sealed = vis, sl
	}
	var (
		tx    []txOp
		attrs map[string]types.AttributeValue
		err   error
	)
	if extra != nil {
		if tx, attrs, err = extra(rec); err != nil {
			return nil, err
		}
	}
	item, err := recordItem(k, what, rec, 1, sealed, attrs)
	if err != nil {
		return nil, err
	}
	c, n, v := condNew()
	if len(tx) == 0 {
		_, err = s.db.PutItem(ctx, putInput(s, item, c, n, v))
		if err != nil {
			return nil, dbErr(err, "create "+what)
		}
		return (*T)(rec), nil
	}
	tx = append([]txOp{{putTx(s, item, c, n, v), fault.New(fault.Conflict, "%s %s exists", what, getID(k))}}, tx...)
	if err := s.transact(ctx, tx, "create "+what); err != nil {
		return nil, err
	}
	return (*T)(rec), nil
}

// getID is the id at the end of an owner item's sort key (AGENT#<id>).
func getID(k itemKey) string {
	for i := len(k.sk) - 1; i >= 0; i-- {
		if k.sk[i] == '#' {
			return k.sk[i+1:]
		}
	}
	return k.sk
}

// updateRecord is the read-modify-write of a record with a version check. check, when given, runs
// after mutate and may add transaction items (e.g. that a new agent id exists).
func updateRecord[T any, P interface {
	*T
	record
}](ctx context.Context, s *Store, dev string, k itemKey, what, id string, kind OwnerKind, mutate func(P) error, check func(old, new P) ([]txOp, map[string]types.AttributeValue, error)) (*T, error) {
	var result *T
	err := updateLoop(ctx, what, id, func() (bool, error) {
		o, err := readRecord[T, P](ctx, s, k, what, id)
		if err != nil {
			return false, err
		}
		old := *o.rec
		rec := P(o.rec)
		created := old
		if err := mutate(rec); err != nil {
			return false, err
		}
		rec.stamp(P(&created).createdAt(), s.clock())
		sealed := o.sealed
		if m := rec.metadata(); m != nil {
			vis, sl, err := s.sealMeta(ctx, dev, ownerTag(kind, id), *m, o.sealed)
			if err != nil {
				return false, err
			}
			*m, sealed = vis, sl
		}
		var (
			tx    []txOp
			attrs map[string]types.AttributeValue
		)
		if check != nil {
			if tx, attrs, err = check(P(&old), rec); err != nil {
				return false, err
			}
		}
		for n, v := range o.kept {
			if _, set := attrs[n]; !set {
				if attrs == nil {
					attrs = map[string]types.AttributeValue{}
				}
				attrs[n] = v
			}
		}
		item, err := recordItem(k, what, rec, o.ver+1, sealed, attrs)
		if err != nil {
			return false, err
		}
		c, n, v := condVersion(o.ver)
		if len(tx) == 0 {
			_, err = s.db.PutItem(ctx, putInput(s, item, c, n, v))
			if _, ok := isCondFailed(err); ok {
				return true, nil
			}
			if err != nil {
				return false, dbErr(err, "update "+what)
			}
		} else {
			tx = append([]txOp{{putTx(s, item, c, n, v), errRetry}}, tx...)
			if err := s.transact(ctx, tx, "update "+what); err != nil {
				return err == errRetry, err
			}
		}
		result = (*T)(rec)
		return false, nil
	})
	return result, err
}

// listRecords is one page of records.
func listRecords[T any, P interface {
	*T
	record
}](ctx context.Context, s *Store, q pageQuery, p Page, what string) (*List[T], error) {
	return listPage(ctx, s, q, p, what, func(it map[string]types.AttributeValue) (*T, error) {
		var v T
		if err := decodeDoc(it, &v); err != nil {
			return nil, err
		}
		P(&v).normalize()
		return &v, nil
	})
}
