package sealer

import (
	"context"
	"testing"

	"sinew/internal/config"
	"sinew/internal/fault"
	"sinew/internal/handler"
	"sinew/internal/resources"
)

func TestSealer(t *testing.T) {
	for _, tc := range []struct {
		name       string
		key        string
		newErr     bool
		refusesAll bool
	}{
		{"no key", "", true, true},
		{"a key", "alias/sinew", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// What Lambda gives every function; the bootstraps' build (lambda.norpc) requires them.
			for k, v := range map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKID",
				"AWS_SECRET_ACCESS_KEY": "S", config.EnvSecretsKey: tc.key} {
				t.Setenv(k, v)
			}
			env, err := handler.Env{}.Load(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := New(env); (err != nil) != tc.newErr {
				t.Errorf("New error = %v, want error %v", err, tc.newErr)
			}
			s, err := IfKeyed(env)
			if err != nil {
				t.Fatalf("IfKeyed: %v", err)
			}
			if _, ok := s.(resources.SealerUnavailable); ok != tc.refusesAll {
				t.Errorf("IfKeyed = %T", s)
			}
			if tc.refusesAll {
				if _, err := s.Seal(context.Background(), nil, []byte("x")); err == nil || fault.KindOf(err) == "" {
					t.Errorf("Seal without a key = %v, want a typed refusal", err)
				}
			}
		})
	}
}
