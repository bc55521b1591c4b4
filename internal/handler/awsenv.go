package handler

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/logging"
)

// unsupportedAWSEnv are the settings of the SDK's default configuration that AWSFromEnv does not
// implement: each would change which credentials, endpoints or request behaviour a client gets,
// so a function that has one set refuses to start rather than run without it. The shared config
// files, SSO, web identity, container and instance credentials are what LoadDefaultConfig links
// and does at every cold start, and what a Lambda function never uses: Lambda gives it static
// credentials in the environment.
var unsupportedAWSEnv = []string{
	"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
	"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME",
	"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
	"AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
	"AWS_ENABLE_ENDPOINT_DISCOVERY", "AWS_USE_DUALSTACK_ENDPOINT", "AWS_USE_FIPS_ENDPOINT",
	"AWS_DEFAULTS_MODE", "AWS_DISABLE_REQUEST_COMPRESSION", "AWS_REQUEST_MIN_COMPRESSION_SIZE_BYTES",
	"AWS_DISABLE_CLOCK_SKEW_CORRECTION", "AWS_ACCOUNT_ID_ENDPOINT_MODE",
	"AWS_REQUEST_CHECKSUM_CALCULATION", "AWS_RESPONSE_CHECKSUM_VALIDATION",
	"AWS_AUTH_SCHEME_PREFERENCE", "AWS_SIGV4A_SIGNING_REGION_SET",
}

// AWSFromEnv is the AWS SDK configuration of a Lambda function read from its environment alone,
// as config.LoadDefaultConfig reads the same variables: static credentials (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_ACCOUNT_ID), the region (AWS_REGION, else
// AWS_DEFAULT_REGION), endpoints (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>,
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS), AWS_CA_BUNDLE, AWS_MAX_ATTEMPTS, AWS_RETRY_MODE and
// AWS_SDK_UA_APP_ID. Anything else that would change the configuration (unsupportedAWSEnv) is an
// error, and so are missing credentials: LoadDefaultConfig would look for them in files and
// metadata services, which is the work and the linking this avoids.
func AWSFromEnv(getenv func(string) string) (aws.Config, error) {
	for _, k := range unsupportedAWSEnv {
		if getenv(k) != "" {
			return aws.Config{}, fmt.Errorf("%s is set: this build reads the AWS configuration from the environment alone and does not support it", k)
		}
	}
	src, err := newEnvSource(getenv)
	if err != nil {
		return aws.Config{}, err
	}
	cfg := aws.Config{
		Logger:        logging.NewStandardLogger(os.Stderr),
		ConfigSources: []any{src},
		Region:        firstEnv(getenv, "AWS_REGION", "AWS_DEFAULT_REGION"),
		AppID:         getenv("AWS_SDK_UA_APP_ID"),
	}
	creds, err := envCredentials(getenv)
	if err != nil {
		return aws.Config{}, err
	}
	cfg.Credentials = aws.NewCredentialsCache(creds)
	if base := getenv("AWS_ENDPOINT_URL"); base != "" && !src.ignoreEndpoints {
		cfg.BaseEndpoint = aws.String(base)
	}
	if err := envRetry(getenv, &cfg); err != nil {
		return aws.Config{}, err
	}
	if path := getenv("AWS_CA_BUNDLE"); path != "" {
		if cfg.HTTPClient, err = caBundleClient(path); err != nil {
			return aws.Config{}, err
		}
	}
	return cfg, nil
}

func firstEnv(getenv func(string) string, keys ...string) string {
	for _, k := range keys {
		if v := getenv(k); v != "" {
			return v
		}
	}
	return ""
}

func envCredentials(getenv func(string) string) (aws.CredentialsProvider, error) {
	id := firstEnv(getenv, "AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY")
	secret := firstEnv(getenv, "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY")
	if id == "" || secret == "" {
		return nil, fmt.Errorf("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are required: this build reads credentials from the environment alone")
	}
	return credentials.StaticCredentialsProvider{Value: aws.Credentials{
		AccessKeyID: id, SecretAccessKey: secret, SessionToken: getenv("AWS_SESSION_TOKEN"),
		AccountID: getenv("AWS_ACCOUNT_ID"), Source: "EnvConfigCredentials",
	}}, nil
}

func envRetry(getenv func(string) string, cfg *aws.Config) error {
	if v := getenv("AWS_MAX_ATTEMPTS"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid value AWS_MAX_ATTEMPTS=%s, %w", v, err)
		}
		cfg.RetryMaxAttempts = int(n)
	}
	if v := getenv("AWS_RETRY_MODE"); v != "" {
		mode, err := aws.ParseRetryMode(v)
		if err != nil {
			return fmt.Errorf("invalid value AWS_RETRY_MODE=%s, %w", v, err)
		}
		cfg.RetryMode = mode
	}
	return nil
}

// caBundleClient is the SDK's default HTTP client trusting the bundle's certificates alone, as
// LoadDefaultConfig builds it for AWS_CA_BUNDLE.
func caBundleClient(path string) (aws.HTTPClient, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read AWS_CA_BUNDLE: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("AWS_CA_BUNDLE %s holds no PEM certificate", path)
	}
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		if tr.TLSClientConfig == nil {
			tr.TLSClientConfig = &tls.Config{}
		}
		tr.TLSClientConfig.RootCAs = pool
	}), nil
}

// envSource answers the service clients' questions about their endpoint (through
// aws.Config.ConfigSources, as config.EnvConfig does): AWS_ENDPOINT_URL_<SERVICE>, with the
// service's SDK ID upper-cased and its spaces made underscores, unless
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true.
type envSource struct {
	getenv          func(string) string
	ignoreEndpoints bool
	ignoreSet       bool
}

func newEnvSource(getenv func(string) string) (*envSource, error) {
	s := &envSource{getenv: getenv}
	if v := getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"); v != "" {
		switch strings.ToLower(v) {
		case "true":
			s.ignoreEndpoints = true
		case "false":
		default:
			return nil, fmt.Errorf("invalid value AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=%s: true or false", v)
		}
		s.ignoreSet = true
	}
	return s, nil
}

// GetIgnoreConfiguredEndpoints is AWS_IGNORE_CONFIGURED_ENDPOINT_URLS.
func (s *envSource) GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error) {
	return s.ignoreEndpoints, s.ignoreSet, nil
}

// GetServiceBaseEndpoint is AWS_ENDPOINT_URL_<SERVICE> for the service sdkID names.
func (s *envSource) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	v := s.getenv("AWS_ENDPOINT_URL_" + strings.ReplaceAll(strings.ToUpper(sdkID), " ", "_"))
	return v, v != "", nil
}
