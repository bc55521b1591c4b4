package resources

import (
	"context"

	"sinew/internal/store"
)

// UserInput is the body of POST /users and PUT /users/{user_id}.
type UserInput struct {
	Name     string         `json:"name,omitempty"`
	About    string         `json:"about,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

func (in *UserInput) check() error {
	if err := checkText("name", in.Name, false, maxName); err != nil {
		return err
	}
	return checkText("about", in.About, false, maxAbout)
}

func (in *UserInput) apply(u *store.User) {
	u.Name, u.About, u.Metadata = in.Name, in.About, in.Metadata
}

// CreateUser creates a user from a body.
func (s *Service) CreateUser(ctx context.Context, dev string, body []byte) (*store.User, error) {
	in, err := decodeInput[UserInput](body)
	if err != nil {
		return nil, err
	}
	var u store.User
	in.apply(&u)
	return s.Store.CreateUser(ctx, dev, u)
}

// ReplaceUser replaces a user's fields (PUT).
func (s *Service) ReplaceUser(ctx context.Context, dev, id string, body []byte) (*store.User, error) {
	in, err := decodeInput[UserInput](body)
	if err != nil {
		return nil, err
	}
	return s.Store.UpdateUser(ctx, dev, id, func(u *store.User) error {
		in.apply(u)
		return nil
	})
}

// PatchUser merges a patch into a user (PATCH).
func (s *Service) PatchUser(ctx context.Context, dev, id string, body []byte) (*store.User, error) {
	patch, err := decodePatch(body)
	if err != nil {
		return nil, err
	}
	return s.Store.UpdateUser(ctx, dev, id, func(u *store.User) error {
		in, err := patchInput[UserInput](&UserInput{Name: u.Name, About: u.About, Metadata: u.Metadata}, patch)
		if err != nil {
			return err
		}
		in.apply(u)
		return nil
	})
}
