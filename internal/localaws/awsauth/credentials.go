package awsauth

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Credentials are the access key local mode makes for its data directory.
type Credentials struct {
	AccessKeyID     string `json:"AccessKeyId"`
	SecretAccessKey string `json:"SecretAccessKey"`
}

// FileName is the credentials file's name in local mode's data directory.
const FileName = "aws-credentials.json"

// String names the key without its secret, so a credentials value printed by mistake leaks nothing.
func (c Credentials) String() string { return c.AccessKeyID + " (secret not shown)" }

// GoString is String for %#v.
func (c Credentials) GoString() string { return c.String() }

// Env is the environment a client needs. AWS_SESSION_TOKEN is set empty so that a token left in
// the developer's shell from a real AWS session is not sent: local mode refuses session tokens.
func (c Credentials) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + c.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + c.SecretAccessKey,
		"AWS_SESSION_TOKEN=",
	}
}

// Provider is the AWS SDK for Go's provider of these credentials, for local mode's own clients.
func (c Credentials) Provider() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, "")
}

// LoadOrCreate reads dir/aws-credentials.json, or makes new random credentials and writes them
// there (0600), so they survive restarts. A file readable by group or others is an error naming the
// chmod to run.
func LoadOrCreate(dir string) (Credentials, error) {
	c, err := Load(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		return c, err
	}
	if c, err = newCredentials(); err != nil {
		return Credentials{}, err
	}
	created, err := create(filepath.Join(dir, FileName), c)
	if err != nil {
		return Credentials{}, err
	}
	if !created {
		// Another process made the file first: its credentials are the ones clients were given.
		return Load(dir)
	}
	return c, nil
}

// Load reads dir/aws-credentials.json without creating it; a missing file is an error wrapping
// fs.ErrNotExist.
func Load(dir string) (Credentials, error) {
	path := filepath.Join(dir, FileName)
	f, err := os.Open(path)
	if err != nil {
		return Credentials{}, fmt.Errorf("awsauth: read credentials: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Credentials{}, fmt.Errorf("awsauth: read credentials: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return Credentials{}, fmt.Errorf("awsauth: credentials file %s is readable by other users (mode %04o): run `chmod 600 %s`", path, perm, path)
	}
	var c Credentials
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Credentials{}, fmt.Errorf("awsauth: credentials file %s is not valid JSON: %w", path, err)
	}
	if c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return Credentials{}, fmt.Errorf("awsauth: credentials file %s lacks AccessKeyId or SecretAccessKey", path)
	}
	return c, nil
}

// newCredentials makes an access key shaped like AWS's: "AKIA" and 16 base32 characters, and a
// 40-character base64 secret.
func newCredentials() (Credentials, error) {
	id := make([]byte, 10) // 10 bytes are 16 base32 characters
	secret := make([]byte, 30)
	if _, err := rand.Read(id); err != nil {
		return Credentials{}, fmt.Errorf("awsauth: generate access key id: %w", err)
	}
	if _, err := rand.Read(secret); err != nil {
		return Credentials{}, fmt.Errorf("awsauth: generate secret access key: %w", err)
	}
	return Credentials{
		AccessKeyID:     "AKIA" + base32.StdEncoding.EncodeToString(id),
		SecretAccessKey: base64.StdEncoding.EncodeToString(secret),
	}, nil
}

// create writes c to path through a temp file, fsynced, then linked into place: a reader never
// sees a half-written file, and unlike a rename the link never replaces a file another process
// made meanwhile (created is then false).
func create(path string, c Credentials) (created bool, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("awsauth: create credentials directory: %w", err)
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return false, fmt.Errorf("awsauth: encode credentials: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".aws-credentials-*.json")
	if err != nil {
		return false, fmt.Errorf("awsauth: create temp credentials file: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 already; Chmod makes that independent of its implementation.
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return false, fmt.Errorf("awsauth: chmod credentials file: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return false, fmt.Errorf("awsauth: write credentials file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, fmt.Errorf("awsauth: sync credentials file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("awsauth: close credentials file: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("awsauth: install credentials file: %w", err)
	}
	return true, nil
}
