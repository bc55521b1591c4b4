package kms

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awskms "github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/smithy-go"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// start opens a Service on dir and serves it on loopback; it returns the service, an SDK client and
// the endpoint URL.
func start(t testing.TB, dir string) (*Service, *awskms.Client, string) {
	t.Helper()
	svc, err := Open(Options{Dir: dir, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	client := awskms.New(awskms.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(srv.URL),
		HTTPClient:   srv.Client(),
	})
	return svc, client, srv.URL
}

var secretCtx = map[string]string{"developer": "dev1", "owner": "agent#a1", "tool": "send_email"}

func TestKeyFileCreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".local")
	svc, client, _ := start(t, dir)
	fi, err := os.Stat(svc.Path())
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("key file permissions = %o, want 600", perm)
	}
	out, err := client.DescribeKey(context.Background(), &awskms.DescribeKeyInput{KeyId: aws.String(DefaultAlias)})
	if err != nil {
		t.Fatal(err)
	}
	md := out.KeyMetadata
	if md.KeyState != types.KeyStateEnabled || md.KeySpec != types.KeySpecSymmetricDefault || !md.Enabled {
		t.Errorf("metadata = %+v", md)
	}
	if want := "arn:aws:kms:us-east-1:000000000000:key/" + aws.ToString(md.KeyId); aws.ToString(md.Arn) != want {
		t.Errorf("Arn = %s, want %s", aws.ToString(md.Arn), want)
	}
	// Every way of naming the key finds it.
	for _, ref := range []string{aws.ToString(md.KeyId), aws.ToString(md.Arn), "arn:aws:kms:us-east-1:000000000000:" + DefaultAlias} {
		got, err := client.DescribeKey(context.Background(), &awskms.DescribeKeyInput{KeyId: aws.String(ref)})
		if err != nil {
			t.Errorf("DescribeKey(%s): %v", ref, err)
			continue
		}
		if aws.ToString(got.KeyMetadata.KeyId) != aws.ToString(md.KeyId) {
			t.Errorf("DescribeKey(%s) found %s", ref, aws.ToString(got.KeyMetadata.KeyId))
		}
	}
}

func TestGenerateDataKeyDecrypt(t *testing.T) {
	ctx := context.Background()
	_, client, _ := start(t, t.TempDir())
	tests := []struct {
		name  string
		input awskms.GenerateDataKeyInput
		size  int
	}{
		{"AES_256", awskms.GenerateDataKeyInput{KeySpec: types.DataKeySpecAes256}, 32},
		{"AES_128", awskms.GenerateDataKeyInput{KeySpec: types.DataKeySpecAes128}, 16},
		{"NumberOfBytes", awskms.GenerateDataKeyInput{NumberOfBytes: aws.Int32(1024)}, 1024},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.input
			in.KeyId = aws.String(DefaultAlias)
			in.EncryptionContext = secretCtx
			gen, err := client.GenerateDataKey(ctx, &in)
			if err != nil {
				t.Fatal(err)
			}
			if len(gen.Plaintext) != tc.size {
				t.Fatalf("data key has %d bytes, want %d", len(gen.Plaintext), tc.size)
			}
			if !strings.HasPrefix(aws.ToString(gen.KeyId), "arn:aws:kms:us-east-1:000000000000:key/") {
				t.Errorf("KeyId = %s, want a key ARN", aws.ToString(gen.KeyId))
			}
			dec, err := client.Decrypt(ctx, &awskms.DecryptInput{CiphertextBlob: gen.CiphertextBlob, EncryptionContext: secretCtx})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(dec.Plaintext, gen.Plaintext) {
				t.Error("Decrypt did not give back the data key")
			}
			if aws.ToString(dec.KeyId) != aws.ToString(gen.KeyId) || dec.EncryptionAlgorithm != types.EncryptionAlgorithmSpecSymmetricDefault {
				t.Errorf("Decrypt KeyId %s alg %s", aws.ToString(dec.KeyId), dec.EncryptionAlgorithm)
			}
		})
	}
	// Two data keys are never the same.
	a, _ := client.GenerateDataKey(ctx, &awskms.GenerateDataKeyInput{KeyId: aws.String(DefaultAlias), KeySpec: types.DataKeySpecAes256})
	b, _ := client.GenerateDataKey(ctx, &awskms.GenerateDataKeyInput{KeyId: aws.String(DefaultAlias), KeySpec: types.DataKeySpecAes256})
	if a == nil || b == nil || bytes.Equal(a.Plaintext, b.Plaintext) {
		t.Error("two GenerateDataKey calls gave the same key (or failed)")
	}
	without, err := client.GenerateDataKeyWithoutPlaintext(ctx, &awskms.GenerateDataKeyWithoutPlaintextInput{KeyId: aws.String(DefaultAlias), KeySpec: types.DataKeySpecAes256})
	if err != nil {
		t.Fatal(err)
	}
	if dec, err := client.Decrypt(ctx, &awskms.DecryptInput{CiphertextBlob: without.CiphertextBlob}); err != nil || len(dec.Plaintext) != 32 {
		t.Errorf("decrypting a key made without plaintext: %v", err)
	}
}

func TestDecryptFailures(t *testing.T) {
	ctx := context.Background()
	_, client, _ := start(t, t.TempDir())
	enc, err := client.Encrypt(ctx, &awskms.EncryptInput{KeyId: aws.String(DefaultAlias), Plaintext: []byte("smtp-password"), EncryptionContext: secretCtx})
	if err != nil {
		t.Fatal(err)
	}
	other, err := client.CreateKey(ctx, &awskms.CreateKeyInput{Description: aws.String("other")})
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Clone(enc.CiphertextBlob)
	tampered[len(tampered)-1] ^= 1
	otherVersion := bytes.Clone(enc.CiphertextBlob)
	binary.BigEndian.PutUint32(otherVersion[17:21], 7)
	wrongTool := map[string]string{"developer": "dev1", "owner": "agent#a1", "tool": "other_tool"}
	otherDev := map[string]string{"developer": "dev2", "owner": "agent#a1", "tool": "send_email"}

	tests := []struct {
		name    string
		in      awskms.DecryptInput
		code    string
		message string
	}{
		{"wrong context value", awskms.DecryptInput{CiphertextBlob: enc.CiphertextBlob, EncryptionContext: wrongTool}, "InvalidCiphertextException", ""},
		{"another developer", awskms.DecryptInput{CiphertextBlob: enc.CiphertextBlob, EncryptionContext: otherDev}, "InvalidCiphertextException", ""},
		{"missing context", awskms.DecryptInput{CiphertextBlob: enc.CiphertextBlob}, "InvalidCiphertextException", ""},
		{"tampered", awskms.DecryptInput{CiphertextBlob: tampered, EncryptionContext: secretCtx}, "InvalidCiphertextException", ""},
		{"unknown version", awskms.DecryptInput{CiphertextBlob: otherVersion, EncryptionContext: secretCtx}, "InvalidCiphertextException", ""},
		{"garbage", awskms.DecryptInput{CiphertextBlob: []byte("not a ciphertext")}, "InvalidCiphertextException", ""},
		{"incorrect key", awskms.DecryptInput{CiphertextBlob: enc.CiphertextBlob, EncryptionContext: secretCtx, KeyId: other.KeyMetadata.KeyId}, "IncorrectKeyException", "The key ID in the request does not identify a CMK that can perform this operation."},
		{"too long", awskms.DecryptInput{CiphertextBlob: make([]byte, 6145)}, "ValidationException", "1 validation error detected: Value at 'ciphertextBlob' failed to satisfy constraint: Member must have length less than or equal to 6144"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.Decrypt(ctx, &tc.in)
			assertAPIError(t, err, tc.code, tc.message)
		})
	}
	// The right context in another order still decrypts: the context is a map, not a list.
	dec, err := client.Decrypt(ctx, &awskms.DecryptInput{CiphertextBlob: enc.CiphertextBlob, EncryptionContext: map[string]string{"tool": "send_email", "owner": "agent#a1", "developer": "dev1"}, KeyId: aws.String(DefaultAlias)})
	if err != nil || string(dec.Plaintext) != "smtp-password" {
		t.Fatalf("Decrypt = %v", err)
	}
}

func assertAPIError(t *testing.T, err error, code, message string) {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error = %v, want API error %s", err, code)
	}
	if apiErr.ErrorCode() != code {
		t.Errorf("code = %s, want %s (message %q)", apiErr.ErrorCode(), code, apiErr.ErrorMessage())
	}
	if message != "" && apiErr.ErrorMessage() != message {
		t.Errorf("message = %q, want %q", apiErr.ErrorMessage(), message)
	}
}

func TestKeyRefsAndValidation(t *testing.T) {
	ctx := context.Background()
	_, client, _ := start(t, t.TempDir())
	const missing = "0b3b4b2e-4a40-4c59-9d35-6c4a3f1d2e10"
	tests := []struct {
		name    string
		in      awskms.GenerateDataKeyInput
		code    string
		message string
	}{
		{"unknown key id", awskms.GenerateDataKeyInput{KeyId: aws.String(missing), KeySpec: types.DataKeySpecAes256}, "NotFoundException", "Key 'arn:aws:kms:us-east-1:000000000000:key/" + missing + "' does not exist"},
		{"unknown alias", awskms.GenerateDataKeyInput{KeyId: aws.String("alias/nope"), KeySpec: types.DataKeySpecAes256}, "NotFoundException", "Alias arn:aws:kms:us-east-1:000000000000:alias/nope is not found."},
		{"other region ARN", awskms.GenerateDataKeyInput{KeyId: aws.String("arn:aws:kms:eu-west-1:000000000000:key/" + missing), KeySpec: types.DataKeySpecAes256}, "NotFoundException", "Invalid arn arn:aws:kms:eu-west-1:000000000000:key/" + missing},
		{"not a key id", awskms.GenerateDataKeyInput{KeyId: aws.String("my-key"), KeySpec: types.DataKeySpecAes256}, "NotFoundException", "Invalid keyId 'my-key'"},
		{"both spec and bytes", awskms.GenerateDataKeyInput{KeyId: aws.String(DefaultAlias), KeySpec: types.DataKeySpecAes256, NumberOfBytes: aws.Int32(32)}, "ValidationException", "Please specify either number of bytes or key spec."},
		{"neither spec nor bytes", awskms.GenerateDataKeyInput{KeyId: aws.String(DefaultAlias)}, "ValidationException", "Please specify either number of bytes or key spec."},
		{"too many bytes", awskms.GenerateDataKeyInput{KeyId: aws.String(DefaultAlias), NumberOfBytes: aws.Int32(1025)}, "ValidationException", "1 validation error detected: Value '1025' at 'numberOfBytes' failed to satisfy constraint: Member must have value less than or equal to 1024"},
		{"bad key spec", awskms.GenerateDataKeyInput{KeyId: aws.String(DefaultAlias), KeySpec: "AES_512"}, "ValidationException", "1 validation error detected: Value 'AES_512' at 'keySpec' failed to satisfy constraint: Member must satisfy enum value set: [AES_256, AES_128]"},
		{"dry run", awskms.GenerateDataKeyInput{KeyId: aws.String(DefaultAlias), KeySpec: types.DataKeySpecAes256, DryRun: aws.Bool(true)}, "DryRunOperationException", "The request would have succeeded, but the DryRun option is set."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.GenerateDataKey(ctx, &tc.in)
			assertAPIError(t, err, tc.code, tc.message)
		})
	}
	_, err := client.Encrypt(ctx, &awskms.EncryptInput{KeyId: aws.String(DefaultAlias), Plaintext: make([]byte, 4097)})
	assertAPIError(t, err, "ValidationException", "1 validation error detected: Value at 'plaintext' failed to satisfy constraint: Member must have length less than or equal to 4096")
	_, err = client.Encrypt(ctx, &awskms.EncryptInput{KeyId: aws.String(DefaultAlias), Plaintext: []byte("x"), EncryptionAlgorithm: types.EncryptionAlgorithmSpecRsaesOaepSha256})
	assertAPIError(t, err, "InvalidKeyUsageException", "")
	_, err = client.CreateAlias(ctx, &awskms.CreateAliasInput{AliasName: aws.String(DefaultAlias), TargetKeyId: aws.String(missing)})
	assertAPIError(t, err, "AlreadyExistsException", "An alias with the name arn:aws:kms:us-east-1:000000000000:alias/sinew-secrets already exists")
	_, err = client.CreateAlias(ctx, &awskms.CreateAliasInput{AliasName: aws.String("alias/aws/s3"), TargetKeyId: aws.String(missing)})
	assertAPIError(t, err, "NotAuthorizedException", "")
}

// TestRotation: after a rotation new ciphertexts name the new version, old ones still decrypt,
// ReEncrypt moves an old one to the new version, and all of it survives reopening the key file.
func TestRotation(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	_, client, _ := start(t, dir)
	before, err := client.Encrypt(ctx, &awskms.EncryptInput{KeyId: aws.String(DefaultAlias), Plaintext: []byte("v1 secret"), EncryptionContext: secretCtx})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.RotateKeyOnDemand(ctx, &awskms.RotateKeyOnDemandInput{KeyId: aws.String(DefaultAlias)}); err != nil {
		t.Fatal(err)
	}
	after, err := client.Encrypt(ctx, &awskms.EncryptInput{KeyId: aws.String(DefaultAlias), Plaintext: []byte("v2 secret"), EncryptionContext: secretCtx})
	if err != nil {
		t.Fatal(err)
	}
	if v := blobVersion(t, before.CiphertextBlob); v != 1 {
		t.Errorf("version before rotation = %d, want 1", v)
	}
	if v := blobVersion(t, after.CiphertextBlob); v != 2 {
		t.Errorf("version after rotation = %d, want 2", v)
	}
	re, err := client.ReEncrypt(ctx, &awskms.ReEncryptInput{
		CiphertextBlob: before.CiphertextBlob, SourceEncryptionContext: secretCtx,
		DestinationKeyId: aws.String(DefaultAlias), DestinationEncryptionContext: secretCtx,
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := blobVersion(t, re.CiphertextBlob); v != 2 {
		t.Errorf("re-encrypted version = %d, want 2", v)
	}
	if aws.ToString(re.SourceKeyId) != aws.ToString(re.KeyId) {
		t.Errorf("SourceKeyId %s != KeyId %s", aws.ToString(re.SourceKeyId), aws.ToString(re.KeyId))
	}
	_, err = client.ReEncrypt(ctx, &awskms.ReEncryptInput{CiphertextBlob: before.CiphertextBlob, DestinationKeyId: aws.String(DefaultAlias)})
	assertAPIError(t, err, "InvalidCiphertextException", "")

	// A second process on the same key file (local mode restarted) reads every version.
	_, client2, _ := start(t, dir)
	for name, c := range map[string]struct {
		blob []byte
		want string
	}{"before": {before.CiphertextBlob, "v1 secret"}, "after": {after.CiphertextBlob, "v2 secret"}, "re-encrypted": {re.CiphertextBlob, "v1 secret"}} {
		dec, err := client2.Decrypt(ctx, &awskms.DecryptInput{CiphertextBlob: c.blob, EncryptionContext: secretCtx})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if string(dec.Plaintext) != c.want {
			t.Errorf("%s: plaintext %q, want %q", name, dec.Plaintext, c.want)
		}
	}
}

func blobVersion(t *testing.T, blob []byte) uint32 {
	t.Helper()
	h, err := parseHeader(blob)
	if err != nil {
		t.Fatal(err)
	}
	return h.version
}

// TestRawProtocol sends what an SDK never would: the answers are AWS's error shapes.
func TestRawProtocol(t *testing.T) {
	_, _, url := start(t, t.TempDir())
	tests := []struct {
		name   string
		method string
		target string
		body   string
		status int
		typ    string
	}{
		{"malformed JSON", "POST", "TrentService.GenerateDataKey", `{"KeyId": `, 400, "SerializationException"},
		{"wrong member type", "POST", "TrentService.GenerateDataKey", `{"KeyId": 5}`, 400, "SerializationException"},
		{"bad base64", "POST", "TrentService.Decrypt", `{"CiphertextBlob": "%%%"}`, 400, "SerializationException"},
		{"array body", "POST", "TrentService.Decrypt", `[]`, 400, "SerializationException"},
		{"unknown operation", "POST", "TrentService.ScheduleKeyDeletion", `{}`, 400, "UnknownOperationException"},
		{"other service", "POST", "AWSEvents.PutEvents", `{}`, 400, "UnknownOperationException"},
		{"no target", "POST", "", `{}`, 400, "UnknownOperationException"},
		{"GET", "GET", "TrentService.Decrypt", ``, 400, "UnknownOperationException"},
		{"oversized", "POST", "TrentService.Encrypt", `{"Plaintext": "` + strings.Repeat("A", maxBody) + `"}`, 413, "ValidationException"},
		{"empty body", "POST", "TrentService.DescribeKey", ``, 400, "ValidationException"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, url, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/x-amz-json-1.1")
			if tc.target != "" {
				req.Header.Set("X-Amz-Target", tc.target)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Errorf("status = %d, want %d (%s)", resp.StatusCode, tc.status, body)
			}
			var e struct {
				Type    string `json:"__type"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("body %q is not JSON: %v", body, err)
			}
			if e.Type != tc.typ || e.Message == "" {
				t.Errorf("error = %+v, want type %s with a message", e, tc.typ)
			}
		})
	}
}

// TestLogsCarryNoSecrets: the JSON logs of a full round trip hold no plaintext or key material.
func TestLogsCarryNoSecrets(t *testing.T) {
	var logs bytes.Buffer
	svc, err := Open(Options{Dir: t.TempDir(), Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	client := awskms.New(awskms.Options{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), BaseEndpoint: aws.String(srv.URL)})
	ctx := context.Background()
	gen, err := client.GenerateDataKey(ctx, &awskms.GenerateDataKeyInput{KeyId: aws.String(DefaultAlias), KeySpec: types.DataKeySpecAes256})
	if err != nil {
		t.Fatal(err)
	}
	secret := "hunter2-smtp-password"
	enc, err := client.Encrypt(ctx, &awskms.EncryptInput{KeyId: aws.String(DefaultAlias), Plaintext: []byte(secret)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Decrypt(ctx, &awskms.DecryptInput{CiphertextBlob: enc.CiphertextBlob}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Rotate(ctx, DefaultAlias); err != nil {
		t.Fatal(err)
	}
	var kf keyFile
	data, _ := os.ReadFile(svc.Path())
	if err := json.Unmarshal(data, &kf); err != nil {
		t.Fatal(err)
	}
	forbidden := []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), base64.StdEncoding.EncodeToString(gen.Plaintext)}
	for _, v := range kf.Keys[0].Versions {
		forbidden = append(forbidden, base64.StdEncoding.EncodeToString(v.Material))
	}
	if logs.Len() == 0 {
		t.Fatal("no logs written")
	}
	for _, f := range forbidden {
		if strings.Contains(logs.String(), f) {
			t.Errorf("logs carry a secret value")
		}
	}
}

func TestOpenRejectsBadKeyFile(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not JSON":      "{",
		"short key":     `{"keys":[{"key_id":"0b3b4b2e-4a40-4c59-9d35-6c4a3f1d2e10","versions":[{"version":1,"material":"AAAA"}]}]}`,
		"no versions":   `{"keys":[{"key_id":"0b3b4b2e-4a40-4c59-9d35-6c4a3f1d2e10","versions":[]}]}`,
		"bad key id":    `{"keys":[{"key_id":"k1","versions":[]}]}`,
		"wrong version": `{"keys":[{"key_id":"0b3b4b2e-4a40-4c59-9d35-6c4a3f1d2e10","versions":[{"version":2,"material":"` + base64.StdEncoding.EncodeToString(make([]byte, 32)) + `"},{"version":1,"material":"` + base64.StdEncoding.EncodeToString(make([]byte, 32)) + `"}]}]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, KeyFileName), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(Options{Dir: dir, Logger: quiet()}); err == nil {
			t.Errorf("%s: Open accepted a broken key file", name)
		}
	}
	if _, err := Open(Options{}); err == nil {
		t.Error("Open accepted an empty Dir")
	}
}

// TestCLI drives the endpoint with the AWS CLI, as a user of local mode would.
func TestCLI(t *testing.T) {
	awsCLI, err := exec.LookPath("aws")
	if err != nil {
		t.Fatal("the `aws` command is not on PATH: install the AWS CLI (make deps, or apt-get install awscli)")
	}
	_, _, url := start(t, t.TempDir())
	dir := t.TempDir()
	run := func(args ...string) ([]byte, error) {
		cmd := exec.Command(awsCLI, append(args, "--endpoint-url", url, "--output", "json")...)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_DEFAULT_REGION=us-east-1",
			"AWS_REGION=us-east-1", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return stderr.Bytes(), err
		}
		return out, nil
	}
	out, err := run("kms", "generate-data-key", "--key-id", DefaultAlias, "--key-spec", "AES_256", "--encryption-context", "developer=dev1,tool=t")
	if err != nil {
		t.Fatalf("generate-data-key: %v: %s", err, out)
	}
	var gen struct{ CiphertextBlob, Plaintext, KeyId string }
	if err := json.Unmarshal(out, &gen); err != nil {
		t.Fatal(err)
	}
	blob, _ := base64.StdEncoding.DecodeString(gen.CiphertextBlob)
	pt, _ := base64.StdEncoding.DecodeString(gen.Plaintext)
	if len(pt) != 32 || !strings.HasPrefix(gen.KeyId, "arn:aws:kms:") {
		t.Fatalf("generate-data-key gave %d-byte key, KeyId %s", len(pt), gen.KeyId)
	}
	blobFile := filepath.Join(dir, "blob")
	if err := os.WriteFile(blobFile, blob, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = run("kms", "decrypt", "--ciphertext-blob", "fileb://"+blobFile, "--encryption-context", "developer=dev1,tool=t")
	if err != nil {
		t.Fatalf("decrypt: %v: %s", err, out)
	}
	var dec struct{ Plaintext string }
	if err := json.Unmarshal(out, &dec); err != nil {
		t.Fatal(err)
	}
	if dec.Plaintext != gen.Plaintext {
		t.Error("the CLI's decrypt did not give back the data key")
	}
	out, err = run("kms", "decrypt", "--ciphertext-blob", "fileb://"+blobFile, "--encryption-context", "developer=dev2,tool=t")
	if err == nil || !strings.Contains(string(out), "InvalidCiphertextException") {
		t.Errorf("decrypt with the wrong context: err %v, stderr %s", err, out)
	}
	out, err = run("kms", "describe-key", "--key-id", "alias/missing")
	if err == nil || !strings.Contains(string(out), "NotFoundException") {
		t.Errorf("describe-key of a missing alias: err %v, stderr %s", err, out)
	}
}

// BenchmarkGenerateDataKeyDecrypt is envelope encryption's KMS traffic for one secret: a data key
// made and opened again, through the SDK on loopback.
func BenchmarkGenerateDataKeyDecrypt(b *testing.B) {
	ctx := context.Background()
	_, client, _ := start(b, b.TempDir())
	for b.Loop() {
		gen, err := client.GenerateDataKey(ctx, &awskms.GenerateDataKeyInput{KeyId: aws.String(DefaultAlias), KeySpec: types.DataKeySpecAes256, EncryptionContext: secretCtx})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := client.Decrypt(ctx, &awskms.DecryptInput{CiphertextBlob: gen.CiphertextBlob, EncryptionContext: secretCtx}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSharedKeyFile: a rotation made by another process on the same key file (a rotation command
// run beside local mode) is seen by the running endpoint: its new ciphertexts decrypt, and the
// running endpoint encrypts with the new version from then on.
func TestSharedKeyFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	_, server, _ := start(t, dir)
	command, err := Open(Options{Dir: dir, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := command.Rotate(ctx, DefaultAlias); err != nil || v != 2 {
		t.Fatalf("Rotate = %d, %v", v, err)
	}
	srv := httptest.NewServer(command)
	defer srv.Close()
	cmdClient := awskms.New(awskms.Options{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), BaseEndpoint: aws.String(srv.URL)})
	enc, err := cmdClient.Encrypt(ctx, &awskms.EncryptInput{KeyId: aws.String(DefaultAlias), Plaintext: []byte("x"), EncryptionContext: secretCtx})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.Decrypt(ctx, &awskms.DecryptInput{CiphertextBlob: enc.CiphertextBlob, EncryptionContext: secretCtx}); err != nil {
		t.Fatalf("the running endpoint cannot decrypt the new version: %v", err)
	}
	enc, err = server.Encrypt(ctx, &awskms.EncryptInput{KeyId: aws.String(DefaultAlias), Plaintext: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if v := blobVersion(t, enc.CiphertextBlob); v != 2 {
		t.Errorf("the running endpoint encrypts with version %d, want 2", v)
	}
}

// TestEndpointFromEnvironment: code that loads the default SDK configuration finds this endpoint
// through AWS_ENDPOINT_URL_KMS, the way sinew's functions do in local mode.
func TestEndpointFromEnvironment(t *testing.T) {
	_, _, url := start(t, t.TempDir())
	t.Setenv("AWS_ENDPOINT_URL_KMS", url)
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out, err := awskms.NewFromConfig(cfg).DescribeKey(context.Background(), &awskms.DescribeKeyInput{KeyId: aws.String(DefaultAlias)})
	if err != nil || out.KeyMetadata == nil {
		t.Fatalf("DescribeKey through AWS_ENDPOINT_URL_KMS: %v", err)
	}
}

func TestOpenTightensPermissions(t *testing.T) {
	dir := t.TempDir()
	svc, err := Open(Options{Dir: dir, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(svc.Path(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Options{Dir: dir, Logger: quiet()}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(svc.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("permissions %o after Open, want 600", fi.Mode().Perm())
	}
}
