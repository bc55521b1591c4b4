package resources

import (
	"context"
	"net/http"

	"sinew/internal/httpapi"
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

func (h handlers) registerUsers(rt *httpapi.Router) {
	tags := []string{"users"}
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/users", Handler: h.createUser, Op: httpapi.Operation{ID: "createUser",
		Summary: "Create a user", Tags: tags, Request: ref("UserInput"), Responses: resp(201, "the user", ref("User"))}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/users", Handler: h.listUsers, Op: httpapi.Operation{ID: "listUsers",
		Summary: "List users, newest first", Tags: tags, Params: httpapi.PageParams(), Responses: resp(200, "a page of users", httpapi.ListOf(ref("User")))}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/users/{user_id}", Handler: h.getUser, Op: httpapi.Operation{ID: "getUser",
		Summary: "Get a user", Tags: tags, Responses: resp(200, "the user", ref("User"))}})
	rt.Handle(httpapi.Route{Method: http.MethodPut, Path: "/users/{user_id}", Handler: h.updateUser, Op: httpapi.Operation{ID: "updateUser",
		Summary: "Replace a user's fields", Tags: tags, Request: ref("UserInput"), Responses: resp(200, "the user", ref("User"))}})
	rt.Handle(httpapi.Route{Method: http.MethodPatch, Path: "/users/{user_id}", Handler: h.patchUser, Op: httpapi.Operation{ID: "patchUser",
		Summary: "Merge a patch into a user", Tags: tags, Request: ref("UserPatch"), Responses: resp(200, "the user", ref("User"))}})
	rt.Handle(httpapi.Route{Method: http.MethodDelete, Path: "/users/{user_id}", Handler: h.deleteUser, Op: httpapi.Operation{ID: "deleteUser",
		Summary: "Delete a user with the user's docs", Tags: tags, Responses: resp(204, "deleted", nil)}})
}

func (h handlers) createUser(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return created(h.s.CreateUser(ctx, r.DeveloperID, r.Body()))
}

func (h handlers) listUsers(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return list(r, func(p store.Page) (*store.List[store.User], error) { return h.s.Store.ListUsers(ctx, r.DeveloperID, p) })
}

func (h handlers) getUser(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.Store.GetUser(ctx, r.DeveloperID, r.Param("user_id")))
}

func (h handlers) updateUser(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.ReplaceUser(ctx, r.DeveloperID, r.Param("user_id"), r.Body()))
}

func (h handlers) patchUser(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.PatchUser(ctx, r.DeveloperID, r.Param("user_id"), r.Body()))
}

func (h handlers) deleteUser(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return noContent(h.s.Store.DeleteUser(ctx, r.DeveloperID, r.Param("user_id")))
}
