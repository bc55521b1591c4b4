package resources

import (
	"context"
	"net/http"

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

// docRoutes serves the doc and search routes of one kind of owner (agents or users).
type docRoutes struct {
	s     *Service
	owner ownerFn
}

// register adds the doc routes under base (the owner's path); what names them in the OpenAPI
// document.
func (h docRoutes) register(rt *httpapi.Router, base, what string) {
	tags := []string{"docs"}
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: base + "/docs", MaxBody: docMaxBody, Handler: h.create, Op: httpapi.Operation{ID: "create" + what + "Doc",
		Summary: "Add a doc", Tags: tags, Request: ref("DocInput"), Responses: resp(201, "the doc", ref("Doc"))}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: base + "/docs", Handler: h.list, Op: httpapi.Operation{ID: "list" + what + "Docs",
		Summary: "List docs, in the order they were made", Tags: tags, Params: httpapi.PageParams(),
		Responses: resp(200, "a page of docs", httpapi.ListOf(ref("Doc")))}})
	rt.Handle(httpapi.Route{Method: http.MethodDelete, Path: base + "/docs/{doc_id}", Handler: h.delete, Op: httpapi.Operation{ID: "delete" + what + "Doc",
		Summary: "Delete a doc", Tags: tags, Responses: resp(204, "deleted", nil)}})
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: base + "/search", Handler: h.search, Op: httpapi.Operation{ID: "search" + what + "Docs",
		Summary: "Keyword search of the docs",
		Description: "A keyword search, not Julep's embedding search: the text's words are scored against each doc's title and " +
			"content with BM25, case- and accent-insensitively; docs that match no word are left out; metadata_filter keeps docs " +
			"whose metadata has each given key with an equal value. vector is refused.",
		Tags: tags, Request: ref("SearchRequest"), Responses: resp(200, "the best docs first", ref("SearchResult"))}})
	h.registerBulkDelete(rt, base, what)
}

func (h docRoutes) create(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return created(h.s.CreateDoc(ctx, r.DeveloperID, h.owner(r), r.Body()))
}

func (h docRoutes) list(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return list(r, func(p store.Page) (*store.List[store.Doc], error) {
		return h.s.Store.ListDocs(ctx, r.DeveloperID, h.owner(r), p)
	})
}

func (h docRoutes) delete(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return noContent(h.s.Store.DeleteDoc(ctx, r.DeveloperID, h.owner(r), r.Param("doc_id")))
}

func (h docRoutes) search(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.SearchDocs(ctx, r.DeveloperID, h.owner(r), r.Body()))
}
