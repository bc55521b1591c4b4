package eventbridge

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzPutEvents sends arbitrary bodies: the answer is a result whose entries account for every
// request entry, or one of AWS's error shapes; never an internal error or a panic.
func FuzzPutEvents(f *testing.F) {
	svc, err := Open(Options{Dir: f.TempDir(), Buses: []string{"sinew"}, Logger: quiet()})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"Entries":[{"Source":"s","DetailType":"d","Detail":"{}"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set("X-Amz-Target", "AWSEvents.PutEvents")
		rec := httptest.NewRecorder()
		svc.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			var in putEventsRequest
			var out putEventsResponse
			if json.Unmarshal(body, &in) != nil || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
				t.Fatalf("200 for a body that does not decode, or a bad answer: %q", rec.Body.Bytes())
			}
			failed := 0
			for _, e := range out.Entries {
				if (e.EventID == "") == (e.ErrorCode == "") {
					t.Fatalf("entry with both or neither of EventId and ErrorCode: %+v", e)
				}
				if e.ErrorCode != "" {
					failed++
				}
			}
			if len(out.Entries) != len(in.Entries) || failed != out.FailedEntryCount {
				t.Fatalf("%d entries in, %d out, %d failed, FailedEntryCount %d", len(in.Entries), len(out.Entries), failed, out.FailedEntryCount)
			}
			return
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
		}
		var e struct {
			Type string `json:"__type"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Type == "" {
			t.Fatalf("error answer without __type: %q", rec.Body.Bytes())
		}
	})
}

// FuzzParsePattern: parsing and matching arbitrary patterns never panics.
func FuzzParsePattern(f *testing.F) {
	f.Add([]byte(`{"source":["aws.states"]}`))
	ev := map[string]any{"source": "aws.states", "resources": []any{"a"}, "detail": map[string]any{"status": "FAILED", "n": json.Number("1")}}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePattern(data)
		if err != nil {
			return
		}
		p.Match(ev)
	})
}
