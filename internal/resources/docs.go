package resources

import (
	"context"

	"sinew/internal/docsearch"
	"sinew/internal/httpapi"
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

// SearchDocs is a keyword search of an owner's docs: the query's words are scored against each
// doc's title and content with BM25 (k1 1.2, b 0.75), case- and accent-insensitively on letters and
// digits; docs that match no word are left out; metadata_filter keeps docs whose metadata has each
// given key with an equal value. It is not Julep's embedding search, and says so.
func (s *Service) SearchDocs(ctx context.Context, dev string, o store.Owner, body []byte) (*docsearch.Result, error) {
	var in docsearch.Input
	if err := httpapi.DecodeJSON(body, &in); err != nil {
		return nil, err
	}
	if err := in.Check(); err != nil {
		return nil, err
	}
	docs, truncated, err := s.allDocs(ctx, dev, o)
	if err != nil {
		return nil, err
	}
	return &docsearch.Result{Docs: docsearch.Rank(docs, &in), Truncated: truncated}, nil
}

func (s *Service) allDocs(ctx context.Context, dev string, o store.Owner) ([]store.Doc, bool, error) {
	var out []store.Doc
	p := store.Page{Limit: store.MaxLimit}
	for {
		l, err := s.Store.ListDocs(ctx, dev, o, p)
		if err != nil {
			return nil, false, err
		}
		out = append(out, l.Items...)
		if l.NextCursor == nil {
			return out, false, nil
		}
		if len(out) >= docsearch.MaxDocs {
			return out[:docsearch.MaxDocs], true, nil
		}
		p.Cursor = *l.NextCursor
	}
}
