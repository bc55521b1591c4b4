package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
)

// greeter is a route package in miniature: its handlers are named methods, registered one
// rt.Handle per route with the route's OpenAPI operation.
type greeter struct{ greeting string }

func (g *greeter) greet(_ context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	var body struct {
		Name string `json:"name"`
	}
	if err := r.Decode(&body); err != nil {
		return nil, err
	}
	if body.Name == "" {
		return nil, fault.Invalid("name", "name is required: whom to greet")
	}
	return httpapi.OK(map[string]string{"message": g.greeting + ", " + body.Name}), nil
}

func Example() {
	rt := httpapi.New(httpapi.Options{Logger: slog.New(slog.DiscardHandler)})
	g := &greeter{greeting: "Hello"}
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/greetings", Public: true, Handler: g.greet,
		Op: httpapi.Operation{Summary: "Greet someone", Responses: map[int]httpapi.Resp{200: {Description: "the greeting"}}}})

	// HTTPHandler serves the router as API Gateway would (local mode does the same).
	h := httpapi.HTTPHandler(rt.ServeEvent, nil)
	for _, body := range []string{`{"name": "Ada"}`, `{}`, `{"nmae": "Ada"}`} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/greetings", strings.NewReader(body)))
		out, _ := io.ReadAll(w.Result().Body)
		fmt.Println(w.Code, strings.TrimSpace(string(out)))
	}
	// Output:
	// 200 {"message":"Hello, Ada"}
	// 400 {"error":{"type":"Sinew.InvalidInput","message":"name is required: whom to greet","field":"name"}}
	// 400 {"error":{"type":"Sinew.InvalidInput","message":"unknown field \"nmae\"","field":"nmae"}}
}
