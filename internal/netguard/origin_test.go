package netguard_test

import (
	"net/http"
	"testing"

	"sinew/internal/netguard"
)

func TestCrossOrigin(t *testing.T) {
	tests := []struct {
		from, to string
		cross    bool
	}{
		{"http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b", false},
		{"http://127.0.0.1:8080/a", "http://127.0.0.1:9090/a", true}, // another port
		{"https://api.example.com/a", "https://API.example.com:443/b", false},
		{"http://api.example.com/a", "http://api.example.com:80/b", false},
		{"http://api.example.com/a", "https://api.example.com/a", true}, // another scheme
		{"https://api.example.com/a", "https://evil.example.com/a", true},
		{"https://example.com/a", "https://sub.example.com/a", true}, // net/http would forward Authorization here
	}
	for _, tt := range tests {
		from, _ := http.NewRequest("GET", tt.from, nil)
		to, _ := http.NewRequest("GET", tt.to, nil)
		if got := netguard.CrossOrigin(to, []*http.Request{from}); got != tt.cross {
			t.Errorf("%s -> %s: cross origin %v, want %v", tt.from, tt.to, got, tt.cross)
		}
	}
}

// TestDropAcrossOrigins: a hop to another origin keeps only the plain headers; one within the
// origin keeps them all; the wrapped policy still decides first.
func TestDropAcrossOrigins(t *testing.T) {
	policy := netguard.DropAcrossOrigins(netguard.RedirectPolicy(5))
	first, _ := http.NewRequest("GET", "http://127.0.0.1:8080/a", nil)
	for _, tt := range []struct {
		to   string
		keep bool
	}{{"http://127.0.0.1:8080/b", true}, {"http://127.0.0.1:9090/b", false}} {
		next, _ := http.NewRequest("GET", tt.to, nil)
		next.Header.Set("X-BB-API-Key", "k")
		next.Header.Set("Authorization", "Bearer k")
		next.Header.Set("Accept", "application/json")
		next.Header.Set("User-Agent", "sinew")
		if err := policy(next, []*http.Request{first}); err != nil {
			t.Fatal(err)
		}
		if got := next.Header.Get("X-BB-API-Key") != "" && next.Header.Get("Authorization") != ""; got != tt.keep {
			t.Errorf("%s: the key headers kept %v, want %v", tt.to, got, tt.keep)
		}
		if next.Header.Get("Accept") == "" || next.Header.Get("User-Agent") == "" {
			t.Errorf("%s: the plain headers were dropped: %v", tt.to, next.Header)
		}
	}
	ftp, _ := http.NewRequest("GET", "ftp://127.0.0.1/x", nil)
	if err := policy(ftp, []*http.Request{first}); err == nil {
		t.Error("the wrapped policy's refusal of a ftp redirect was lost")
	}
}
