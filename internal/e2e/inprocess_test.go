package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"sinew/internal/lambdaboundary"
)

type echoIn struct {
	N   int    `json:"n"`
	Pad string `json:"pad"`
}

// TestInProcessHandlerConcurrentReplies: local mode invokes each function's in-process handler
// (lambdaboundary.Handler) from many executions at once, so every invocation must answer its own
// reply. aws-lambda-go's lambda.NewHandler returns a slice of a pooled buffer that the next
// invocation reuses; used in process, concurrent executions received each other's replies
// (seen under TestLoad at 1,000 executions: a system call's Prepare got an integration call's
// envelope, and the execution FAILED with States.Runtime).
func TestInProcessHandlerConcurrentReplies(t *testing.T) {
	h := lambdaboundary.Handler(func(_ context.Context, in echoIn) (echoIn, error) { return in, nil })
	const workers, each = 32, 200
	var wg sync.WaitGroup
	var mu sync.Mutex
	bad := 0
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				n := w*each + i
				// Replies of different lengths, so a reused buffer shows as a wrong or broken reply.
				in, _ := json.Marshal(echoIn{N: n, Pad: strings.Repeat("x", n%97)})
				out, err := h.Invoke(context.Background(), in)
				var got echoIn
				if err != nil || !decodes(out, &got) || got.N != n || len(got.Pad) != n%97 {
					mu.Lock()
					if bad++; bad <= 3 {
						t.Errorf("invocation %d answered %q (%v)", n, out, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if bad > 0 {
		t.Errorf("%d of %d concurrent invocations got a reply that was not their own", bad, workers*each)
	}
}

// decodes unmarshals out into v; bytes that change while being read (a reused buffer) make
// encoding/json panic, which counts as a wrong reply.
func decodes(out []byte, v any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return json.Unmarshal(out, v) == nil
}
