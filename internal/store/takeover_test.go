package store_test

import (
	"testing"
	"time"

	"sinew/internal/store"
)

// claims is one kind of record a call's claim lives in, seen through the operations a takeover
// involves; a record is handled as an IdemRecord (its Raw form is what a takeover compares).
type claims struct {
	first     func(t *testing.T, e *env, dev string, v any) *store.IdemRecord
	take      func(e *env, dev string, held *store.IdemRecord, v any) (*store.IdemRecord, bool, error)
	overwrite func(t *testing.T, e *env, v any)
	value     func(t *testing.T, e *env) any
}

var idemClaims = claims{
	first: func(t *testing.T, e *env, dev string, v any) *store.IdemRecord {
		r, _, err := e.s.PutIdempotency(ctx(), dev, "call#c1", v, time.Hour)
		return must[*store.IdemRecord](t)(r, err)
	},
	take: func(e *env, dev string, held *store.IdemRecord, v any) (*store.IdemRecord, bool, error) {
		return e.s.TakeOverIdempotency(ctx(), dev, "call#c1", held, v)
	},
	overwrite: func(t *testing.T, e *env, v any) {
		must[*store.IdemRecord](t)(e.s.UpdateIdempotency(ctx(), "d", "call#c1", v))
	},
	value: func(t *testing.T, e *env) any {
		return must[*store.IdemRecord](t)(e.s.GetIdempotency(ctx(), "d", "call#c1")).Value
	},
}

var claimX = store.Execution{ExecutionID: "exec-c", Workflow: "tool_call"}

var execClaims = claims{
	first: func(t *testing.T, e *env, dev string, v any) *store.IdemRecord {
		held, raw, _, err := e.s.ClaimExecution(ctx(), dev, claimX, v)
		if err != nil {
			t.Fatal(err)
		}
		return &store.IdemRecord{Value: held, Raw: raw}
	},
	take: func(e *env, dev string, held *store.IdemRecord, v any) (*store.IdemRecord, bool, error) {
		raw, took, err := e.s.TakeOverExecutionClaim(ctx(), dev, claimX, held.Raw, v)
		return &store.IdemRecord{Value: v, Raw: raw}, took, err
	},
	overwrite: func(t *testing.T, e *env, v any) {
		if err := e.s.SetExecutionClaim(ctx(), "d", claimX, v, nil, nil); err != nil {
			t.Fatal(err)
		}
	},
	value: func(t *testing.T, e *env) any {
		// A claim over a held one answers the held one.
		held, _, created, err := e.s.ClaimExecution(ctx(), "d", claimX, "probe")
		if err != nil || created {
			t.Fatalf("reading the claim: created %v, %v", created, err)
		}
		return held
	},
}

// TestTakeOver: a takeover replaces a call's claim only if it still holds what its caller read, in
// an idempotency record and in a tool_call execution's record alike.
func TestTakeOver(t *testing.T) {
	lapsed := map[string]any{"state": "running", "call": "x/y", "until": int64(1)}
	mine := map[string]any{"state": "running", "call": "x/y", "until": int64(2)}
	theirs := map[string]any{"state": "running", "call": "x/y", "until": int64(3)}
	tests := []struct {
		name     string
		steps    func(t *testing.T, e *env, c claims, held *store.IdemRecord) (*store.IdemRecord, bool, error)
		wantTook bool
		want     any
	}{
		{"the claim as read is taken", func(t *testing.T, e *env, c claims, held *store.IdemRecord) (*store.IdemRecord, bool, error) {
			return c.take(e, "d", held, mine)
		}, true, mine},
		{"a claim written since is not taken", func(t *testing.T, e *env, c claims, held *store.IdemRecord) (*store.IdemRecord, bool, error) {
			c.overwrite(t, e, theirs)
			return c.take(e, "d", held, mine)
		}, false, theirs},
		{"of two takeovers of one claim, the second fails", func(t *testing.T, e *env, c claims, held *store.IdemRecord) (*store.IdemRecord, bool, error) {
			if _, took, err := c.take(e, "d", held, theirs); err != nil || !took {
				t.Fatalf("first takeover: %v, %v", took, err)
			}
			return c.take(e, "d", held, mine)
		}, false, theirs},
		{"a taken claim is taken again as written (a renewal)", func(t *testing.T, e *env, c claims, held *store.IdemRecord) (*store.IdemRecord, bool, error) {
			r, took, err := c.take(e, "d", held, theirs)
			if err != nil || !took {
				t.Fatalf("first takeover: %v, %v", took, err)
			}
			return c.take(e, "d", r, mine)
		}, true, mine},
		{"another developer's takeover fails", func(t *testing.T, e *env, c claims, held *store.IdemRecord) (*store.IdemRecord, bool, error) {
			return c.take(e, "other", held, mine)
		}, false, lapsed},
	}
	kinds := []struct {
		name string
		c    claims
	}{{"idempotency record", idemClaims}, {"execution claim", execClaims}}
	for _, k := range kinds {
		for _, tt := range tests {
			t.Run(k.name+"/"+tt.name, func(t *testing.T) {
				e := newEnv(t)
				held := k.c.first(t, e, "d", lapsed)
				if held.Raw == "" {
					t.Fatal("the claim as written has no raw form")
				}
				r, took, err := tt.steps(t, e, k.c, held)
				if err != nil || took != tt.wantTook {
					t.Fatalf("takeover = %v, %v; want %v", took, err, tt.wantTook)
				}
				if took && r.Raw == "" {
					t.Error("the claim taken has no raw form")
				}
				if got := k.c.value(t, e); got.(map[string]any)["until"] != tt.want.(map[string]any)["until"] {
					t.Errorf("claim = %v, want %v", got, tt.want)
				}
			})
		}
	}
}

// TestTakeOverKeepsExpiry: a takeover keeps the record's time to live.
func TestTakeOverKeepsExpiry(t *testing.T) {
	e := newEnv(t)
	held, _, err := e.s.PutIdempotency(ctx(), "d", "k", "a", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.advance(time.Minute)
	r, took, err := e.s.TakeOverIdempotency(ctx(), "d", "k", held, "b")
	if err != nil || !took {
		t.Fatalf("takeover = %v, %v", took, err)
	}
	got := must[*store.IdemRecord](t)(e.s.GetIdempotency(ctx(), "d", "k"))
	if got.Value != "b" || !got.ExpiresAt.Equal(held.ExpiresAt) || got.Raw != r.Raw {
		t.Errorf("record = %+v, want b expiring at %v with the takeover's raw form", got, held.ExpiresAt)
	}
}
