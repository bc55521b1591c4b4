package resources

import (
	"context"
	"net/http"
	"time"

	"sinew/internal/docsearch"
	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/store"
)

// BulkDelete is Julep's body of DELETE {owner}/docs: every doc, or those whose metadata matches.
type BulkDelete struct {
	DeleteAll      bool           `json:"delete_all,omitempty"`
	MetadataFilter map[string]any `json:"metadata_filter,omitempty"`
}

// Deleted is one doc a bulk delete removed, as Julep answers it.
type Deleted struct {
	ID        string    `json:"id"`
	DeletedAt time.Time `json:"deleted_at"`
}

// DeleteDocs deletes an owner's docs whose metadata has each key of the filter with an equal value
// (with delete_all, every doc), and answers which.
func (s *Service) DeleteDocs(ctx context.Context, dev string, o store.Owner, body []byte) ([]Deleted, error) {
	var in BulkDelete
	if err := httpapi.DecodeJSON(body, &in); err != nil {
		return nil, err
	}
	if !in.DeleteAll && len(in.MetadataFilter) == 0 {
		return nil, fault.Invalid("metadata_filter", `give a metadata_filter the docs to delete match, or "delete_all": true`)
	}
	// Every page read first: a delete between pages would move the cursor.
	var ids []string
	p := store.Page{Limit: store.MaxLimit}
	for {
		l, err := s.Store.ListDocs(ctx, dev, o, p)
		if err != nil {
			return nil, err
		}
		for _, d := range l.Items {
			if in.DeleteAll || docsearch.MatchesFilter(d.Metadata, in.MetadataFilter) {
				ids = append(ids, d.ID)
			}
		}
		if l.NextCursor == nil {
			break
		}
		p.Cursor = *l.NextCursor
	}
	out := make([]Deleted, 0, len(ids))
	for _, id := range ids {
		if err := s.Store.DeleteDoc(ctx, dev, o, id); err != nil && !fault.Is(err, fault.NotFound) {
			return nil, err
		}
		out = append(out, Deleted{ID: id, DeletedAt: time.Now().UTC()})
	}
	return out, nil
}

func (h docRoutes) registerBulkDelete(rt *httpapi.Router, base, what string) {
	rt.Schema("BulkDeleteDocs", map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
		"delete_all":      map[string]any{"type": "boolean", "description": "every doc of the owner"},
		"metadata_filter": map[string]any{"type": "object", "description": "the docs whose metadata has each key with an equal value"},
	}})
	rt.Handle(httpapi.Route{Method: http.MethodDelete, Path: base + "/docs", Handler: h.bulkDelete, Op: httpapi.Operation{ID: "bulkDelete" + what + "Docs",
		Summary: "Delete docs by metadata, or all (Julep's bulk delete)", Tags: []string{"docs"}, Request: ref("BulkDeleteDocs"),
		Responses: resp(200, "{items: [{id, deleted_at}]}: the docs deleted", httpapi.ListOf(map[string]any{"type": "object"}))}})
}

func (h docRoutes) bulkDelete(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	d, err := h.s.DeleteDocs(ctx, r.DeveloperID, h.owner(r), r.Body())
	if err != nil {
		return nil, err
	}
	return httpapi.OK(httpapi.NewList(d, "")), nil
}
