package handler

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// awsView is what of an aws.Config the functions depend on: the credentials, the region, the
// endpoint each service client resolves, the retry settings, the app id and the trusted CAs.
type awsView struct {
	Creds                 aws.Credentials
	Region, AppID         string
	Base                  string
	Endpoints             map[string]string
	MaxAttempts           int
	RetryMode             aws.RetryMode
	CustomCAs, HTTPClient bool
}

func viewOf(t *testing.T, cfg aws.Config) (awsView, *x509.CertPool) {
	t.Helper()
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil {
		t.Fatalf("retrieve credentials: %v", err)
	}
	creds.CanExpire, creds.Expires = false, time.Time{}
	v := awsView{Creds: creds, Region: cfg.Region, AppID: cfg.AppID, Base: aws.ToString(cfg.BaseEndpoint),
		MaxAttempts: cfg.RetryMaxAttempts, RetryMode: cfg.RetryMode, HTTPClient: cfg.HTTPClient != nil,
		Endpoints: map[string]string{
			"dynamodb":    aws.ToString(dynamodb.NewFromConfig(cfg).Options().BaseEndpoint),
			"sfn":         aws.ToString(sfn.NewFromConfig(cfg).Options().BaseEndpoint),
			"kms":         aws.ToString(kms.NewFromConfig(cfg).Options().BaseEndpoint),
			"lambda":      aws.ToString(lambda.NewFromConfig(cfg).Options().BaseEndpoint),
			"eventbridge": aws.ToString(eventbridge.NewFromConfig(cfg).Options().BaseEndpoint),
		}}
	var pool *x509.CertPool
	if bc, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok {
		if tc := bc.GetTransport().TLSClientConfig; tc != nil && tc.RootCAs != nil {
			v.CustomCAs, pool = true, tc.RootCAs
		}
	}
	return v, pool
}

// cleanAWSEnv leaves the test only the AWS settings it sets, and a home without shared config
// files, so LoadDefaultConfig reads what AWSFromEnv reads.
func cleanAWSEnv(t *testing.T) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

func TestAWSFromEnvMatchesLoadDefaultConfig(t *testing.T) {
	keys := map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "SECRET", "AWS_REGION": "eu-west-1"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range keys {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	bundle := writeCABundle(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"static keys and region", keys},
		{"session token and default region", map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "S",
			"AWS_SESSION_TOKEN": "TOKEN", "AWS_DEFAULT_REGION": "us-west-2"}},
		{"AWS_REGION before AWS_DEFAULT_REGION", with(map[string]string{"AWS_DEFAULT_REGION": "ap-south-1"})},
		{"the older key names", map[string]string{"AWS_ACCESS_KEY": "OLD", "AWS_SECRET_KEY": "OLDS", "AWS_REGION": "us-east-1"}},
		{"account id", with(map[string]string{"AWS_ACCOUNT_ID": "123456789012"})},
		{"one endpoint for all", with(map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:4566"})},
		{"an endpoint per service", with(map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1",
			"AWS_ENDPOINT_URL_SFN": "http://127.0.0.1:2", "AWS_ENDPOINT_URL_KMS": "http://127.0.0.1:3",
			"AWS_ENDPOINT_URL_LAMBDA": "http://127.0.0.1:4", "AWS_ENDPOINT_URL_EVENTBRIDGE": "http://127.0.0.1:5"})},
		{"a service's endpoint before the general one", with(map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:9",
			"AWS_ENDPOINT_URL_KMS": "http://127.0.0.1:3"})},
		{"configured endpoints ignored", with(map[string]string{"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true",
			"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ENDPOINT_URL_KMS": "http://127.0.0.1:3"})},
		{"configured endpoints not ignored", with(map[string]string{"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "FALSE",
			"AWS_ENDPOINT_URL_SFN": "http://127.0.0.1:2"})},
		{"retries", with(map[string]string{"AWS_MAX_ATTEMPTS": "7", "AWS_RETRY_MODE": "adaptive"})},
		{"app id", with(map[string]string{"AWS_SDK_UA_APP_ID": "sinew"})},
		{"CA bundle", with(map[string]string{"AWS_CA_BUNDLE": bundle})},
		{"what Lambda sets", with(map[string]string{"AWS_SESSION_TOKEN": "T", "AWS_DEFAULT_REGION": "eu-west-1",
			"AWS_LAMBDA_FUNCTION_NAME": "sinew-system", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
			"AWS_EXECUTION_ENV": "AWS_Lambda_provided.al2023", "AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001",
			"AWS_XRAY_DAEMON_ADDRESS": "169.254.79.129:2000", "AWS_LAMBDA_LOG_FORMAT": "JSON"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanAWSEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			want, err := awsconfig.LoadDefaultConfig(context.Background())
			if err != nil {
				t.Fatalf("LoadDefaultConfig: %v", err)
			}
			got, err := AWSFromEnv(os.Getenv)
			if err != nil {
				t.Fatalf("AWSFromEnv: %v", err)
			}
			wv, wp := viewOf(t, want)
			gv, gp := viewOf(t, got)
			if !equalView(wv, gv) {
				t.Errorf("AWSFromEnv:\n%+v\nLoadDefaultConfig:\n%+v", gv, wv)
			}
			if (wp == nil) != (gp == nil) || (wp != nil && !wp.Equal(gp)) {
				t.Errorf("the trusted CAs differ from LoadDefaultConfig's")
			}
		})
	}
}

func equalView(a, b awsView) bool {
	if len(a.Endpoints) != len(b.Endpoints) {
		return false
	}
	for k, v := range a.Endpoints {
		if b.Endpoints[k] != v {
			return false
		}
	}
	a.Endpoints, b.Endpoints = nil, nil
	return a.Creds == b.Creds && a.Region == b.Region && a.AppID == b.AppID && a.Base == b.Base &&
		a.MaxAttempts == b.MaxAttempts && a.RetryMode == b.RetryMode && a.CustomCAs == b.CustomCAs && a.HTTPClient == b.HTTPClient
}

func TestAWSFromEnvRefuses(t *testing.T) {
	base := map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "S", "AWS_REGION": "eu-west-1"}
	cases := map[string]struct {
		set, unset string
		want       string
	}{
		"no credentials":          {unset: "AWS_SECRET_ACCESS_KEY", want: "AWS_SECRET_ACCESS_KEY are required"},
		"bad max attempts":        {set: "AWS_MAX_ATTEMPTS=many", want: "AWS_MAX_ATTEMPTS"},
		"bad retry mode":          {set: "AWS_RETRY_MODE=eager", want: "AWS_RETRY_MODE"},
		"bad ignore endpoints":    {set: "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=yes", want: "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"},
		"CA bundle not found":     {set: "AWS_CA_BUNDLE=/nonexistent/ca.pem", want: "AWS_CA_BUNDLE"},
		"CA bundle without a PEM": {set: "AWS_CA_BUNDLE=" + writeFile(t, "not a certificate"), want: "no PEM"},
	}
	for _, k := range unsupportedAWSEnv {
		cases[k] = struct{ set, unset, want string }{set: k + "=x", want: k + " is set"}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			delete(env, tc.unset)
			if k, v, ok := strings.Cut(tc.set, "="); ok {
				env[k] = v
			}
			_, err := AWSFromEnv(func(k string) string { return env[k] })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("AWSFromEnv = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeCABundle writes a PEM file of one self-signed certificate.
func writeCABundle(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sinew test CA"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
}
