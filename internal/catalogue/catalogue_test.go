package catalogue_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sinew/internal/catalogue"
	"sinew/internal/httpapi"
	"sinew/internal/integrations/all"
	"sinew/internal/integrations/schemas"
	"sinew/internal/tool"
)

func bearer(r *http.Request) (map[string]string, error) {
	dev, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || dev == "" {
		return nil, errors.New("no bearer")
	}
	return map[string]string{"sub": dev}, nil
}

// TestCatalogueRoutes runs the routes over the registry of every provider and over the generated
// catalogue the api function serves.
func TestCatalogueRoutes(t *testing.T) {
	reg, err := all.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]catalogue.Source{"registry": reg, "generated": schemas.New()} {
		t.Run(name, func(t *testing.T) { testRoutes(t, src) })
	}
}

func testRoutes(t *testing.T, src catalogue.Source) {
	rt := httpapi.New(httpapi.Options{})
	catalogue.Register(rt, src)
	srv := httptest.NewServer(httpapi.HTTPHandler(rt.ServeEvent, bearer))
	defer srv.Close()

	get := func(path, token string) (int, any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: not JSON: %s", path, raw)
		}
		return resp.StatusCode, v
	}

	status, body := get("/integrations", "dev1")
	list, _ := body.([]any)
	if status != 200 || len(list) != len(tool.Providers) {
		t.Fatalf("GET /integrations = %d with %d providers, want 200 with %d", status, len(list), len(tool.Providers))
	}
	for _, e := range list {
		if _, ok := e.(map[string]any)["info"].(map[string]any); !ok {
			t.Fatalf("info is not an object: %v", e)
		}
	}

	tests := []struct {
		path   string
		status int
		check  func(map[string]any) string
	}{
		{"/integrations/email", 200, func(m map[string]any) string {
			if m["provider"] != "email" || m["setup"] == nil {
				return "email without its setup schema"
			}
			return ""
		}},
		{"/integrations/wikipedia", 200, func(m map[string]any) string {
			if m["setup"] != nil {
				return "wikipedia takes no setup, so setup must be null"
			}
			return ""
		}},
		{"/integrations/spider/tool", 200, func(m map[string]any) string {
			fn, _ := m["function"].(map[string]any)
			if m["type"] != "function" || fn["name"] != "spider_crawl" || fn["parameters"] == nil {
				return "the default method is the first (crawl), named <provider>_<method>"
			}
			return ""
		}},
		{"/integrations/spider/links/tool", 200, func(m map[string]any) string {
			if m["function"].(map[string]any)["name"] != "spider_links" {
				return "wrong method"
			}
			return ""
		}},
		{"/integrations/slack", 404, nil},
		{"/integrations/spider/explode/tool", 404, nil},
		{"/integrations/9bad", 400, nil},
		{"/integrations/spider/bad-method/tool", 400, nil},
	}
	for _, tc := range tests {
		status, body := get(tc.path, "dev1")
		if status != tc.status {
			t.Errorf("GET %s = %d (%v), want %d", tc.path, status, body, tc.status)
			continue
		}
		if tc.check != nil {
			if msg := tc.check(body.(map[string]any)); msg != "" {
				t.Errorf("GET %s: %s: %v", tc.path, msg, body)
			}
		}
	}
	if status, _ := get("/integrations", ""); status != 401 {
		t.Errorf("GET /integrations without a token = %d, want 401", status)
	}
}
