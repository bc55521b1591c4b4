package common

import (
	"context"
	"testing"

	"sinew/internal/config"
	"sinew/internal/fault"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		wantErr   bool
		wantTable string
		sealerErr bool
	}{
		{"defaults", map[string]string{}, false, "sinew", true},
		{"set", map[string]string{config.EnvTable: "t1", config.EnvSecretsKey: "alias/sinew"}, false, "t1", false},
		{"a bad variable stops the cold start", map[string]string{config.EnvChatBudget: "forever"}, true, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AWS_REGION", "us-east-1")
			for _, v := range []string{config.EnvTable, config.EnvSecretsKey, config.EnvChatBudget} {
				t.Setenv(v, tt.env[v])
			}
			env, err := Load(context.Background())
			if tt.wantErr {
				if err == nil {
					t.Fatal("Load succeeded, want an error")
				}
				return
			}
			if err != nil || env.Config.Table != tt.wantTable {
				t.Fatalf("Load = %+v, %v", env, err)
			}
			if _, err := env.Sealer(); (err != nil) != tt.sealerErr {
				t.Errorf("Sealer error = %v, want error %v", err, tt.sealerErr)
			}
		})
	}
}

func TestNoKey(t *testing.T) {
	if _, err := (NoKey{}).Seal(context.Background(), nil, []byte("x")); !fault.Is(err, fault.Internal) {
		t.Errorf("Seal = %v", err)
	}
	if _, err := (NoKey{}).Open(context.Background(), nil, []byte("x")); !fault.Is(err, fault.Internal) {
		t.Errorf("Open = %v", err)
	}
}
