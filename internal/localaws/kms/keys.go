package kms

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/uuid"
)

// KeyFileName is the key file's name under the local directory.
const KeyFileName = "kms-keys.json"

// keyFile is the JSON form of the key file. Key material is base64 (encoding/json's []byte form).
type keyFile struct {
	Keys []*key `json:"keys"`
}

type key struct {
	ID          string       `json:"key_id"`
	Description string       `json:"description,omitempty"`
	Created     time.Time    `json:"created"`
	Aliases     []string     `json:"aliases,omitempty"`
	Versions    []keyVersion `json:"versions"` // ascending; the last is used for new encryptions
}

type keyVersion struct {
	Version  uint32    `json:"version"`
	Material []byte    `json:"material"` // 32 bytes: AES-256
	Created  time.Time `json:"created"`
}

func (k *key) newest() keyVersion { return k.Versions[len(k.Versions)-1] }

func (k *key) version(v uint32) (keyVersion, bool) {
	for _, kv := range k.Versions {
		if kv.Version == v {
			return kv, true
		}
	}
	return keyVersion{}, false
}

func newKey(description string, aliases []string, now time.Time) (*key, error) {
	k := &key{ID: uuid.NewString(), Description: description, Created: now, Aliases: aliases}
	if err := k.rotate(now); err != nil {
		return nil, err
	}
	return k, nil
}

// rotate adds a new key version with fresh material; older versions stay for decryption.
func (k *key) rotate(now time.Time) error {
	material := make([]byte, 32)
	if _, err := rand.Read(material); err != nil {
		return fmt.Errorf("generate key material: %w", err)
	}
	next := uint32(1)
	if len(k.Versions) > 0 {
		next = k.newest().Version + 1
	}
	k.Versions = append(k.Versions, keyVersion{Version: next, Material: material, Created: now})
	return nil
}

// loadKeyFile reads the key file at path, creating it with one key carrying aliases when missing.
func loadKeyFile(path string, aliases []string, now time.Time) (*keyFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		k, err := newKey("sinew local mode key", aliases, now)
		if err != nil {
			return nil, err
		}
		kf := &keyFile{Keys: []*key{k}}
		if err := saveKeyFile(path, kf); err != nil {
			return nil, err
		}
		return kf, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	var kf keyFile
	if err := json.Unmarshal(data, &kf); err != nil {
		return nil, fmt.Errorf("key file %s is not valid JSON: %w", path, err)
	}
	for _, k := range kf.Keys {
		if err := k.check(); err != nil {
			return nil, fmt.Errorf("key file %s: %w", path, err)
		}
	}
	return &kf, nil
}

func (k *key) check() error {
	if _, err := uuid.Parse(k.ID); err != nil {
		return fmt.Errorf("key id %q is not a UUID", k.ID)
	}
	if len(k.Versions) == 0 {
		return fmt.Errorf("key %s has no versions", k.ID)
	}
	for i, v := range k.Versions {
		if len(v.Material) != 32 {
			return fmt.Errorf("key %s version %d: material must be 32 bytes", k.ID, v.Version)
		}
		if i > 0 && v.Version <= k.Versions[i-1].Version {
			return fmt.Errorf("key %s: versions must ascend", k.ID)
		}
	}
	return nil
}

// saveKeyFile writes the file atomically (temp file, fsync, rename) with 0600 permissions: a crash
// mid-write never leaves a half-written key file that would lose every key.
func saveKeyFile(path string, kf *keyFile) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create key directory: %w", err)
	}
	data, err := json.MarshalIndent(kf, "", "  ")
	if err != nil {
		return fmt.Errorf("encode key file: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".kms-keys-*.json")
	if err != nil {
		return fmt.Errorf("create temp key file: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("chmod key file: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close key file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("install key file: %w", err)
	}
	return nil
}

func (kf *keyFile) byID(id string) *key {
	for _, k := range kf.Keys {
		if k.ID == id {
			return k
		}
	}
	return nil
}

func (kf *keyFile) byAlias(alias string) *key {
	for _, k := range kf.Keys {
		if slices.Contains(k.Aliases, alias) {
			return k
		}
	}
	return nil
}
