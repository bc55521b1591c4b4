package handler

import (
	"context"
	"os"
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
	}{
		{"defaults", map[string]string{}, false, "sinew"},
		{"set", map[string]string{config.EnvTable: "t1", config.EnvSecretsKey: "alias/sinew"}, false, "t1"},
		{"a bad variable stops the cold start", map[string]string{config.EnvChatBudget: "forever"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// What Lambda gives every function; the bootstraps' build (lambda.norpc) requires them.
			for k, v := range map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "S"} {
				t.Setenv(k, v)
			}
			for _, v := range []string{config.EnvTable, config.EnvSecretsKey, config.EnvChatBudget} {
				t.Setenv(v, tt.env[v])
			}
			env, err := Env{}.Load(context.Background())
			if tt.wantErr {
				if err == nil {
					t.Fatal("Load succeeded, want an error")
				}
				return
			}
			if err != nil || env.Config.Table != tt.wantTable {
				t.Fatalf("Load = %+v, %v", env, err)
			}
		})
	}
}

// TestLoadReadsGetenv: the configuration comes from Env.Getenv, not the process's environment.
func TestLoadReadsGetenv(t *testing.T) {
	for k, v := range map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "S"} {
		t.Setenv(k, v)
	}
	t.Setenv(config.EnvTable, "from-the-process")
	getenv := func(name string) string {
		if name == config.EnvTable {
			return "from-getenv"
		}
		return os.Getenv(name)
	}
	l, err := Env{Getenv: getenv}.Load(context.Background())
	if err != nil || l.Config.Table != "from-getenv" {
		t.Fatalf("Load = %+v, %v; want the table from getenv", l, err)
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
