package preflight

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"sinew/infra/cdk/stack"
)

func settings(t *testing.T, ctx map[string]any) stack.Settings {
	t.Helper()
	s, err := stack.ParseSettings(func(k string) (any, bool) { v, ok := ctx[k]; return v, ok }, slices.Sorted(maps.Keys(ctx)))
	if err != nil {
		t.Fatalf("settings %v: %v", ctx, err)
	}
	return s
}

const haiku = "anthropic.claude-haiku-4-5-20251001-v1:0"

// TestModels: each configured Bedrock model the Region cannot call is refused with the setting
// that names it and the value to set instead; models the table does not know pass with a note.
func TestModels(t *testing.T) {
	tests := []struct {
		name   string
		ctx    map[string]any
		region string
		errs   []string // a part of each refusal, in order
		note   string   // a part of what is said on w; "" for nothing
	}{
		{"default in its Region", nil, "us-east-1", nil, ""},
		{"default elsewhere", nil, "eu-west-1", []string{"SINEW_MODEL (not set; its default is bedrock:us." + haiku + "): us." + haiku +
			" is Bedrock's us. inference profile, which is called from us-east-1, us-east-2, us-west-1, us-west-2, not from eu-west-1; set SINEW_MODEL=bedrock:eu." + haiku}, ""},
		{"profile of the Region", map[string]any{"SINEW_MODEL": "bedrock:eu." + haiku}, "eu-central-1", nil, ""},
		{"model id without its profile", map[string]any{"SINEW_MODEL": "bedrock:" + haiku}, "us-west-2",
			[]string{"SINEW_MODEL=bedrock:" + haiku + ": Bedrock serves " + haiku + " only through an inference profile, not on demand in us-west-2; set SINEW_MODEL=bedrock:us." + haiku}, ""},
		{"ended model", map[string]any{"SINEW_MODEL": "bedrock:us.anthropic.claude-3-5-haiku-20241022-v1:0"}, "us-east-1",
			[]string{"end of life on Bedrock on 2026-06-19; set SINEW_MODEL=bedrock:us." + haiku}, ""},
		{"bedrockModels", map[string]any{stack.CtxBedrockModels: "global." + haiku + ",anthropic.claude-3-haiku-20240307-v1:0"}, "eu-west-1",
			[]string{"SINEW_MODEL (not set", "bedrockModels: anthropic.claude-3-haiku-20240307-v1:0: anthropic.claude-3-haiku-20240307-v1:0 reached its end of life on Bedrock on 2026-09-10 (it is still served on demand in ap-northeast-2, ca-central-1, eu-central-2, sa-east-1 only); put eu." + haiku + " in bedrockModels instead"}, ""},
		{"no profile from the Region", map[string]any{"SINEW_MODEL": "bedrock:" + haiku}, "us-gov-west-1", []string{"no profile of it can be called from us-gov-west-1"}, ""},
		{"unknown model", map[string]any{"SINEW_MODEL": "bedrock:amazon.nova-micro-v1:0"}, "eu-west-1", nil, "does not know"},
		{"not Bedrock", map[string]any{"SINEW_MODEL": "openai:gpt-4o-mini", "SINEW_OPENAI_BASE_URL": "https://llm.example.com/v1"}, "eu-west-1", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			errs := Models(settings(t, tt.ctx), tt.region, &w)
			if len(errs) != len(tt.errs) {
				t.Fatalf("%d refusals %v, want %d", len(errs), errs, len(tt.errs))
			}
			for i, e := range errs {
				if !strings.Contains(e.Error(), tt.errs[i]) {
					t.Errorf("refusal %q, want it to say %q", e, tt.errs[i])
				}
			}
			if (tt.note == "") != (w.Len() == 0) || !strings.Contains(w.String(), tt.note) {
				t.Errorf("said %q, want %q", w.String(), tt.note)
			}
		})
	}
}

// fakeAccount is an account's Lambda concurrency without AWS.
type fakeAccount struct {
	limit, unreserved int
	reserved          map[string]int
	err, reservedErr  error
}

func (f fakeAccount) Concurrency(context.Context) (int, int, error) {
	return f.limit, f.unreserved, f.err
}

func (f fakeAccount) Reserved(_ context.Context, fn string) (int, error) {
	return f.reserved[fn], f.reservedErr
}

// TestConcurrency: the reservations are refused when they would leave the account fewer than 100
// unreserved executions (all of them, in an account whose limit is 100 or less), counting the stack's own current reservations as free; an account that
// cannot be read is said so and passes.
func TestConcurrency(t *testing.T) {
	zero := map[string]any{stack.CtxAPIReservedConcurrency: "0", stack.CtxSettleReservedConcurrency: "0"}
	tests := []struct {
		name    string
		ctx     map[string]any
		account fakeAccount
		refusal []string // parts of the refusal; nil for none
		note    string
	}{
		{"roomy account", nil, fakeAccount{limit: 1000, unreserved: 1000}, nil, ""},
		{"new account at 10", nil, fakeAccount{limit: 10, unreserved: 10}, []string{
			"allows 10 concurrent Lambda executions, 10 of them unreserved",
			"reserving apiReservedConcurrency=20 and settleReservedConcurrency=10 would leave -20",
			"apiReservedConcurrency=0 settleReservedConcurrency=0", "request-service-quota-increase"}, ""},
		{"just enough", nil, fakeAccount{limit: 130, unreserved: 130}, nil, ""},
		{"one short", nil, fakeAccount{limit: 129, unreserved: 129}, []string{"would leave 99", "keeps at least 100", "lower them to 29 together"}, ""},
		{"a first increase to 50", nil, fakeAccount{limit: 50, unreserved: 50}, []string{"would leave 20", "keeps at least 50"}, ""},
		{"redeploy holds its own", nil, fakeAccount{limit: 150, unreserved: 120, reserved: map[string]int{"sinew-api": 20, "sinew-settle": 10}}, nil, ""},
		{"others hold the rest", nil, fakeAccount{limit: 150, unreserved: 120}, []string{"would leave 90", "lower them to 20 together"}, ""},
		{"no reservation", zero, fakeAccount{limit: 10, unreserved: 10}, nil, ""},
		{"one reservation", map[string]any{stack.CtxSettleReservedConcurrency: "0"}, fakeAccount{limit: 115, unreserved: 115},
			[]string{"reserving apiReservedConcurrency=20 would leave 95"}, ""},
		{"unreachable", nil, fakeAccount{err: errors.New("Could not connect to the endpoint URL")}, nil, "could not read the account's Lambda concurrency"},
		{"reservation unreadable", nil, fakeAccount{limit: 10, unreserved: 10, reservedErr: errors.New("AccessDeniedException")}, nil, "could not read sinew-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			err := Concurrency(context.Background(), Input{Settings: settings(t, tt.ctx), StackName: "sinew", Account: tt.account}, &w)
			if (err != nil) != (tt.refusal != nil) {
				t.Fatalf("refusal %v, want one: %v", err, tt.refusal != nil)
			}
			for _, part := range tt.refusal {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("refusal %q, want it to say %q", err, part)
				}
			}
			if (tt.note == "") != (w.Len() == 0) || !strings.Contains(w.String(), tt.note) {
				t.Errorf("said %q, want %q", w.String(), tt.note)
			}
		})
	}
}

// TestRun joins both checks; without a Region the models are said to be unchecked.
func TestRun(t *testing.T) {
	small := fakeAccount{limit: 10, unreserved: 10}
	tests := []struct {
		name, region string
		refusals     int
		note         string
	}{
		{"both refused", "eu-west-1", 2, ""},
		{"no Region", "", 1, "no Region is configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			err := Run(context.Background(), Input{Settings: settings(t, nil), StackName: "sinew", Region: tt.region, Account: small}, &w)
			n := 0
			if err != nil {
				n = strings.Count(err.Error(), "\n") + 1
			}
			if n != tt.refusals || !strings.Contains(w.String(), tt.note) {
				t.Errorf("%d refusals (%v), said %q; want %d and %q", n, err, w.String(), tt.refusals, tt.note)
			}
		})
	}
}
