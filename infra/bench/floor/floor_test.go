// Package floor measures the physical floor under a tool call's dispatch.
//
// It times the JSON decode of the call envelope a Lambda receives and the encode of the result it
// returns, for the same payloads the dispatch benchmarks use (internal/integrations
// BenchmarkExecuteDummy, internal/apicall BenchmarkRoundTrip). No executor does less than this per call.
//
//	go test -run '^$' -bench . -benchmem ./infra/bench/floor/
package floor

import (
	"encoding/json"
	"testing"

	"sinew/internal/jsonv"
)

var payloads = []struct{ name, envelope, result string }{
	{"integration_dummy",
		`{"id":"call_0123456789abcdefghijklmn","type":"integration","integration":{"name":"dummy","arguments":{"a":1,"b":"two","c":[true,null]}}}`,
		`{"a":1,"b":"two","c":[true,null]}`},
	{"api_call",
		`{"id":"call_0123456789abcdefghijklmn","type":"api_call","api_call":{"name":"get_item","arguments":{"path":{"id":42},"params":{"verbose":true}}}}`,
		`{"status_code":200,"headers":{"content-type":"application/json","content-length":"62"},"json":{"id":42,"name":"sinew","tags":["a","b","c"],"ok":true},"content":"eyJpZCI6IDQyLCAibmFtZSI6ICJzaW5ldyIsICJ0YWdzIjogWyJhIiwgImIiLCAiYyJdLCAib2siOiB0cnVlfQ=="}`},
	{"system_list",
		`{"id":"call_0123456789abcdefghijklmn","type":"system","system":{"name":"list_agents","arguments":{"limit":10}}}`,
		`{"items":[{"id":"7b0c1f1e-0000-4000-8000-000000000001","name":"a","about":"x","model":"m","created_at":"2026-01-01T00:00:00Z"},{"id":"7b0c1f1e-0000-4000-8000-000000000002","name":"b","about":"y","model":"m","created_at":"2026-01-01T00:00:00Z"}]}`},
}

// TestPayloads keeps the payloads valid JSON that survives a decode/encode round trip.
func TestPayloads(t *testing.T) {
	for _, p := range payloads {
		for _, s := range []string{p.envelope, p.result} {
			v, err := jsonv.Decode([]byte(s))
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			if _, err := json.Marshal(v); err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
		}
	}
}

// BenchmarkJSONFloor: decode the envelope and the result, encode the result.
func BenchmarkJSONFloor(b *testing.B) {
	for _, p := range payloads {
		b.Run(p.name, func(b *testing.B) {
			env, res := []byte(p.envelope), []byte(p.result)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := jsonv.Decode(env); err != nil {
					b.Fatal(err)
				}
				v, err := jsonv.Decode(res)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
