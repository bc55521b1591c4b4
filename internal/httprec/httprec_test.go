package httprec_test

import (
	"fmt"
	"net/http"
	"testing"

	"sinew/internal/httprec"
)

func TestRecorder(t *testing.T) {
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		wantStatus int
		wantBody   string
		wantType   string
	}{
		{"nothing written", func(http.ResponseWriter, *http.Request) {}, 200, "", ""},
		{"body only", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hi") }, 200, "hi", ""},
		{"first status wins", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			w.WriteHeader(500)
			fmt.Fprint(w, `{}`)
		}, 404, `{}`, "application/json"},
		{"status after body is ignored", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, "a")
			w.WriteHeader(503)
			fmt.Fprint(w, "b")
		}, 200, "ab", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httprec.New()
			tt.handler(rec, nil)
			if rec.Status() != tt.wantStatus || string(rec.Body()) != tt.wantBody || rec.Header().Get("Content-Type") != tt.wantType {
				t.Errorf("got %d %q %q, want %d %q %q", rec.Status(), rec.Body(), rec.Header().Get("Content-Type"), tt.wantStatus, tt.wantBody, tt.wantType)
			}
		})
	}
	var _ http.Flusher = httprec.New()
}

// A handler called in-process, its answer read back.
func ExampleRecorder() {
	rec := httprec.New()
	http.NotFoundHandler().ServeHTTP(rec, &http.Request{})
	fmt.Println(rec.Status(), string(rec.Body()))
	// Output: 404 404 page not found
}
