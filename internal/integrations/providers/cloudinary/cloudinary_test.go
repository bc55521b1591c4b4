package cloudinary_test

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/integrations/integrationstest"
	"sinew/internal/integrations/providers/cloudinary"
)

const (
	apiKey    = "614335564976464"
	apiSecret = "cloudinary-secret-xyz"
	cloud     = "democloud"
)

// fakeCloudinary plays the Upload API (checking the SHA-1 signature of the sorted parameters with
// the secret, and the timestamp) and the delivery host (/res/...).
type fakeCloudinary struct {
	t      *testing.T
	base   string
	faults integrationstest.Faults
	mu     sync.Mutex
	fields map[string]string
	path   string
}

func (f *fakeCloudinary) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/res/") {
		if strings.Contains(r.URL.Path, "missing") {
			w.WriteHeader(404)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("PNG:" + strings.TrimPrefix(r.URL.Path, "/res/")))
		return
	}
	if f.faults.Serve(w) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		f.t.Errorf("multipart: %v", err)
		w.WriteHeader(400)
		return
	}
	fields := map[string]string{}
	for k, v := range r.MultipartForm.Value {
		fields[k] = v[0]
	}
	f.mu.Lock()
	f.fields, f.path = fields, r.URL.Path
	f.mu.Unlock()
	var keys []string
	for k, v := range fields {
		if k != "file" && k != "api_key" && k != "signature" && k != "resource_type" && k != "cloud_name" && v != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var pairs []string
	for _, k := range keys {
		pairs = append(pairs, k+"="+fields[k])
	}
	sum := sha1.Sum([]byte(strings.Join(pairs, "&") + apiSecret))
	if fields["api_key"] != apiKey || fields["signature"] != hex.EncodeToString(sum[:]) {
		w.WriteHeader(401)
		_, _ = w.Write([]byte(`{"error":{"message":"Invalid Signature ` + fields["signature"] + `. String to sign - '` + strings.Join(pairs, "&") + `'."}}`))
		return
	}
	ts, _ := strconv.ParseInt(fields["timestamp"], 10, 64)
	if d := time.Since(time.Unix(ts, 0)); d < -time.Minute || d > time.Hour {
		w.WriteHeader(400)
		_, _ = w.Write([]byte(`{"error":{"message":"Stale request"}}`))
		return
	}
	if strings.HasPrefix(fields["file"], "https://bad.example/") {
		w.WriteHeader(400)
		_, _ = w.Write([]byte(`{"error":{"message":"Resource not found - https://bad.example/x.png"}}`))
		return
	}
	id := fields["public_id"]
	_, _ = w.Write([]byte(`{"asset_id":"a1","public_id":"` + id + `","version":1700000000,"width":640,"height":480,"format":"png","resource_type":"image","bytes":1234,"type":"upload","url":"http://x/` + id + `","secure_url":"` + f.base + `/res/` + cloud + `/image/upload/v1700000000/` + id + `.png","api_key":"` + apiKey + `"}`))
}

func TestCloudinary(t *testing.T) {
	fake := &fakeCloudinary{t: t}
	r, srv := integrationstest.Start(t, cloudinary.Provider, fake, integrationstest.Env{integrations.EnvName("cloudinary", "DELIVERY_URL"): "{{URL}}/res"})
	fake.base = srv.URL
	setup := map[string]any{"cloudinary_api_key": apiKey, "cloudinary_api_secret": apiSecret, "cloudinary_cloud_name": cloud}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

	t.Run("media_edit is the default", func(t *testing.T) {
		got, err := r.Execute(context.Background(), "cloudinary", "", setup, map[string]any{"public_id": "folder/sample",
			"transformation": []any{map[string]any{"width": int64(300), "crop": "scale"}, map[string]any{"effect": "sepia", "angle": int64(10), "raw_transformation": "fl_lossy"}}})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"transformed_url": srv.URL + "/res/democloud/image/upload/c_scale,w_300/a_10,e_sepia,fl_lossy/v1/folder/sample"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("media_edit with base64", func(t *testing.T) {
		got, err := r.Execute(context.Background(), "cloudinary", "media_edit", setup, map[string]any{"public_id": "sample", "transformation": []any{map[string]any{"height": int64(100)}}, "return_base64": true})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"transformed_url": srv.URL + "/res/democloud/image/upload/h_100/sample", "base64": b64("PNG:democloud/image/upload/h_100/sample")}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})

	tests := []struct {
		name       string
		method     string
		setup      map[string]any
		args       map[string]any
		want       any
		wantPath   string
		wantFields map[string]string
		kind       fault.Kind
		msg        string
		field      string
	}{
		{name: "upload a URL", method: "media_upload", setup: setup, args: map[string]any{"file": "https://example.com/cat.png", "public_id": "cat", "upload_params": map[string]any{"folder": "pets", "tags": []any{"a", "b"}}},
			want: map[string]any{"url": srv.URL + "/res/democloud/image/upload/v1700000000/cat.png", "public_id": "cat", "meta_data": map[string]any{
				"asset_id": "a1", "version": int64(1700000000), "width": int64(640), "height": int64(480), "format": "png", "resource_type": "image", "bytes": int64(1234), "type": "upload", "url": "http://x/cat"}},
			wantPath: "/v1_1/democloud/image/upload", wantFields: map[string]string{"file": "https://example.com/cat.png", "public_id": "cat", "folder": "pets", "tags": "a,b", "api_key": apiKey}},
		{name: "upload a data URI as video with base64", method: "media_upload", setup: setup, args: map[string]any{"file": "data:video/mp4;base64,AAAA", "public_id": "clip", "return_base64": true, "upload_params": map[string]any{"resource_type": "video"}},
			wantPath: "/v1_1/democloud/video/upload", wantFields: map[string]string{"file": "data:video/mp4;base64,AAAA", "public_id": "clip", "api_key": apiKey}},
		{name: "a path is refused", method: "media_upload", setup: setup, args: map[string]any{"file": "/etc/passwd"}, kind: fault.InvalidInput, field: "arguments.file"},
		{name: "bad resource type", method: "media_upload", setup: setup, args: map[string]any{"file": "https://example.com/a.png", "upload_params": map[string]any{"resource_type": "../admin"}}, kind: fault.InvalidInput, field: "arguments.upload_params.resource_type"},
		{name: "wrong secret", method: "media_upload", setup: map[string]any{"cloudinary_api_key": apiKey, "cloudinary_api_secret": "wrong-secret-123", "cloudinary_cloud_name": cloud}, args: map[string]any{"file": "https://example.com/a.png"}, kind: fault.Provider, msg: "refused the credentials in the setup (HTTP 401)"},
		{name: "remote file missing", method: "media_upload", setup: setup, args: map[string]any{"file": "https://bad.example/x.png"}, kind: fault.Provider, msg: "Resource not found"},
		{name: "unknown transformation", setup: setup, args: map[string]any{"public_id": "x", "transformation": []any{map[string]any{"sharpen": true}}}, kind: fault.InvalidInput, field: "arguments.transformation[0].sharpen"},
		{name: "download fails", setup: setup, args: map[string]any{"public_id": "missing", "transformation": []any{}, "return_base64": true}, kind: fault.Provider, msg: "HTTP 404"},
		{name: "bad cloud name", setup: map[string]any{"cloudinary_api_key": apiKey, "cloudinary_api_secret": apiSecret, "cloudinary_cloud_name": "a/b"}, args: map[string]any{"public_id": "x", "transformation": []any{}}, kind: fault.InvalidInput, field: "setup.cloudinary_cloud_name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Execute(context.Background(), "cloudinary", tc.method, tc.setup, tc.args)
			if tc.kind != "" {
				integrationstest.CheckErr(t, err, tc.kind, tc.msg, tc.setup)
				if fault.FieldOf(err) != tc.field {
					t.Errorf("field %q, want %q", fault.FieldOf(err), tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
			out := got.(map[string]any)
			if tc.args["return_base64"] == true && out["base64"] != b64("PNG:"+strings.TrimPrefix(out["url"].(string), srv.URL+"/res/")) {
				t.Errorf("base64 %v", out["base64"])
			}
			if _, leaked := out["meta_data"].(map[string]any)["api_key"]; leaked {
				t.Error("meta_data carries api_key")
			}
			fake.mu.Lock()
			defer fake.mu.Unlock()
			if fake.path != tc.wantPath {
				t.Errorf("path %s, want %s", fake.path, tc.wantPath)
			}
			for k, v := range tc.wantFields {
				if fake.fields[k] != v {
					t.Errorf("field %s = %q, want %q", k, fake.fields[k], v)
				}
			}
		})
	}
	t.Run("default public id", func(t *testing.T) {
		got, err := r.Execute(context.Background(), "cloudinary", "media_upload", setup, map[string]any{"file": "https://example.com/a.png"})
		if err != nil {
			t.Fatal(err)
		}
		if id := got.(map[string]any)["public_id"].(string); len(id) != 36 {
			t.Errorf("public id %q, want a UUID", id)
		}
	})
	integrationstest.RunFaults(t, r, &fake.faults, "cloudinary", "media_upload", setup, map[string]any{"file": "https://example.com/a.png"}, append(
		integrationstest.StandardFaults(`{"error":{"message":"Rate Limit Exceeded"}}`, `{"error":{"message":"Service Unavailable"}}`),
		integrationstest.Case{Status: 420, Body: `{"error":{"message":"Rate Limit Exceeded"}}`, Kind: fault.Transient, Msg: "HTTP 420"}))
}
