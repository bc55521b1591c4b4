package store

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
)

// User is a user.
type User struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	About     string         `json:"about,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

func (u *User) normalize() { u.Metadata = normMap(u.Metadata) }

// A user's metadata has no merge keys: it is stored as written.
func (u *User) metadata() *map[string]any { return nil }
func (u *User) stamp(c, up time.Time)     { u.CreatedAt, u.UpdatedAt = c, up }
func (u *User) createdAt() time.Time      { return u.CreatedAt }
func userKey(dev, id string) itemKey      { return ownerItem(dev, Owner{OwnerUser, id}) }

// CreateUser stores a user, with a new id or the one u has (a user of that id already is a Conflict).
func (s *Store) CreateUser(ctx context.Context, dev string, u User) (*User, error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if err := givenID(&u.ID, "user_id"); err != nil {
		return nil, err
	}
	return createRecord[User](ctx, s, dev, &u, userKey(dev, u.ID), "user", OwnerUser, nil)
}

// GetUser reads a user.
func (s *Store) GetUser(ctx context.Context, dev, id string) (*User, error) {
	if err := checkIDs(dev, "user_id", id); err != nil {
		return nil, err
	}
	o, err := readRecord[User](ctx, s, userKey(dev, id), "user", id)
	if err != nil {
		return nil, err
	}
	return o.rec, nil
}

// ListUsers lists the developer's users, newest first.
func (s *Store) ListUsers(ctx context.Context, dev string, p Page) (*List[User], error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	return listRecords[User](ctx, s, liveQuery(devPK(dev), "USER#"), p, "users")
}

// UpdateUser applies mutate to a user.
func (s *Store) UpdateUser(ctx context.Context, dev, id string, mutate func(*User) error) (*User, error) {
	if err := checkIDs(dev, "user_id", id); err != nil {
		return nil, err
	}
	return updateRecord(ctx, s, dev, userKey(dev, id), "user", id, OwnerUser, func(u *User) error {
		if err := mutate(u); err != nil {
			return err
		}
		u.ID = id
		return nil
	}, nil)
}

// DeleteUser deletes a user and the user's docs. Sessions that name the user stay, with the user
// id dangling (GetUser answers NotFound for it).
func (s *Store) DeleteUser(ctx context.Context, dev, id string) error {
	if err := checkIDs(dev, "user_id", id); err != nil {
		return err
	}
	return s.deleteOwner(ctx, dev, Owner{OwnerUser, id})
}

// Doc is a document of an agent or a user.
type Doc struct {
	ID        string         `json:"id"`
	Title     string         `json:"title"`
	Content   any            `json:"content"` // a string or a list of strings (Julep)
	Metadata  map[string]any `json:"metadata,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

func (d *Doc) normalize()                { d.Metadata, d.Content = normMap(d.Metadata), normAny(d.Content) }
func (d *Doc) metadata() *map[string]any { return nil }
func (d *Doc) stamp(c, u time.Time)      { d.CreatedAt, d.UpdatedAt = c, u }
func (d *Doc) createdAt() time.Time      { return d.CreatedAt }
func docKey(dev string, o Owner, id string) itemKey {
	return itemKey{ownerPK(dev, o), "DOC#" + id}
}

// CreateDoc stores a doc of an agent or a user, which must exist.
func (s *Store) CreateDoc(ctx context.Context, dev string, o Owner, d Doc) (*Doc, error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if err := checkOwner(o, OwnerAgent, OwnerUser); err != nil {
		return nil, err
	}
	if d.Title == "" {
		return nil, fault.Invalid("title", "title is required")
	}
	d.ID = newID()
	return createRecord(ctx, s, dev, &d, docKey(dev, o, d.ID), "doc", o.Kind, func(*Doc) ([]txOp, map[string]types.AttributeValue, error) {
		return []txOp{{condLive(s, ownerItem(dev, o)), notFound(string(o.Kind), o.ID)}}, nil, nil
	})
}

// GetDoc reads a doc (with its owner, in one request).
func (s *Store) GetDoc(ctx context.Context, dev string, o Owner, id string) (*Doc, error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if err := checkOwner(o, OwnerAgent, OwnerUser); err != nil {
		return nil, err
	}
	if err := checkID("doc_id", id); err != nil {
		return nil, err
	}
	ok, dk := ownerItem(dev, o), docKey(dev, o, id)
	got, err := s.batchGet(ctx, []itemKey{ok, dk}, "", nil)
	if err != nil {
		return nil, err
	}
	if it := got[ok]; it == nil || getBool(it, attrDeleting) {
		return nil, notFound(string(o.Kind), o.ID)
	}
	r, err := decodeRecord[Doc](got[dk], "doc", id)
	if err != nil {
		return nil, err
	}
	return r.rec, nil
}

// ListDocs lists the docs of an agent or a user, in the order they were made.
func (s *Store) ListDocs(ctx context.Context, dev string, o Owner, p Page) (*List[Doc], error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if err := checkOwner(o, OwnerAgent, OwnerUser); err != nil {
		return nil, err
	}
	if err := s.checkLive(ctx, dev, o); err != nil {
		return nil, err
	}
	return listRecords[Doc](ctx, s, pageQuery{part: ownerPK(dev, o), prefix: "DOC#", forward: true}, p, "docs")
}

// DeleteDoc deletes a doc.
func (s *Store) DeleteDoc(ctx context.Context, dev string, o Owner, id string) error {
	if _, err := s.GetDoc(ctx, dev, o, id); err != nil {
		return err
	}
	return s.deleteIfExists(ctx, docKey(dev, o, id), "doc", id)
}
