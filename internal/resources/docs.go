package resources

import (
	"context"

	"sinew/internal/store"
)

// DocInput is the body of POST /agents/{agent_id}/docs and POST /users/{user_id}/docs.
type DocInput struct {
	Title    string         `json:"title"`
	Content  any            `json:"content"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// docMaxBody is the doc routes' body limit: a doc is one item, under DynamoDB's 400 KB.
const docMaxBody = 400_000

func (in *DocInput) check() error {
	if err := checkText("title", in.Title, true, maxName); err != nil {
		return err
	}
	return checkStrings("content", in.Content, true)
}

// CreateDoc stores a doc of an agent or a user.
func (s *Service) CreateDoc(ctx context.Context, dev string, o store.Owner, body []byte) (*store.Doc, error) {
	in, err := decodeInput[DocInput](body)
	if err != nil {
		return nil, err
	}
	return s.Store.CreateDoc(ctx, dev, o, store.Doc{Title: in.Title, Content: in.Content, Metadata: in.Metadata})
}
