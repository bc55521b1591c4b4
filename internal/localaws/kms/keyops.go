package kms

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"sinew/internal/localaws/awsjson"
)

// The operations on keys and aliases: DescribeKey, CreateKey, CreateAlias and RotateKeyOnDemand,
// and KeyOf, which names the key a request would act on, as IAM reads it.

// KeyMetadata is the subset of KMS's KeyMetadata that a symmetric, AWS_KMS-origin key has.
type KeyMetadata struct {
	AWSAccountID          string   `json:"AWSAccountId"`
	KeyID                 string   `json:"KeyId"`
	Arn                   string   `json:"Arn"`
	CreationDate          float64  `json:"CreationDate"` // epoch seconds, as the JSON protocol sends timestamps
	Enabled               bool     `json:"Enabled"`
	Description           string   `json:"Description"`
	KeyUsage              string   `json:"KeyUsage"`
	KeyState              string   `json:"KeyState"`
	Origin                string   `json:"Origin"`
	KeyManager            string   `json:"KeyManager"`
	CustomerMasterKeySpec string   `json:"CustomerMasterKeySpec"`
	KeySpec               string   `json:"KeySpec"`
	EncryptionAlgorithms  []string `json:"EncryptionAlgorithms"`
	MultiRegion           bool     `json:"MultiRegion"`
}

func (s *Service) metadata(k *key) KeyMetadata {
	return KeyMetadata{
		AWSAccountID: s.account, KeyID: k.ID, Arn: s.keyARN(k.ID),
		CreationDate: float64(k.Created.UnixMilli()) / 1000, Enabled: true, Description: k.Description,
		KeyUsage: "ENCRYPT_DECRYPT", KeyState: "Enabled", Origin: "AWS_KMS", KeyManager: "CUSTOMER",
		CustomerMasterKeySpec: "SYMMETRIC_DEFAULT", KeySpec: "SYMMETRIC_DEFAULT",
		EncryptionAlgorithms: []string{"SYMMETRIC_DEFAULT"},
	}
}

type keyMetadataResponse struct {
	KeyMetadata KeyMetadata `json:"KeyMetadata"`
}

func (s *Service) describeKey(ctx context.Context, body []byte) (any, error) {
	var req struct {
		KeyID       string   `json:"KeyId"`
		GrantTokens []string `json:"GrantTokens"`
	}
	if err := awsjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	s.lockFresh()
	defer s.mu.Unlock()
	k, aerr := s.resolve(req.KeyID)
	if aerr != nil {
		return nil, aerr
	}
	return keyMetadataResponse{KeyMetadata: s.metadata(k)}, nil
}

func (s *Service) createKey(ctx context.Context, body []byte) (any, error) {
	var req struct {
		Description string `json:"Description"`
		KeyUsage    string `json:"KeyUsage"`
		KeySpec     string `json:"KeySpec"`
		CMKSpec     string `json:"CustomerMasterKeySpec"`
		Origin      string `json:"Origin"`
	}
	if err := awsjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	if len(req.Description) > 8192 {
		return nil, awsjson.Validation("1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 8192")
	}
	// Local mode makes symmetric AWS_KMS keys only: refuse what it cannot honour rather than
	// pretend.
	for member, v := range map[string]string{"keyUsage": req.KeyUsage, "keySpec": req.KeySpec, "customerMasterKeySpec": req.CMKSpec, "origin": req.Origin} {
		switch v {
		case "", "ENCRYPT_DECRYPT", "SYMMETRIC_DEFAULT", "AWS_KMS":
		default:
			return nil, awsjson.Errorf(http.StatusBadRequest, "UnsupportedOperationException", "local mode's KMS makes only symmetric ENCRYPT_DECRYPT keys; %s %s is not supported", member, awsjson.Clip(v, 64))
		}
	}
	k, err := newKey(req.Description, nil, s.now().UTC())
	if err != nil {
		return nil, err
	}
	s.lockFresh()
	defer s.mu.Unlock()
	s.keys.Keys = append(s.keys.Keys, k)
	if err := s.save(); err != nil {
		s.keys.Keys = s.keys.Keys[:len(s.keys.Keys)-1]
		return nil, err
	}
	s.log.InfoContext(ctx, "kms key created", "key_id", k.ID)
	return keyMetadataResponse{KeyMetadata: s.metadata(k)}, nil
}

func checkAliasName(name string) *awsjson.Error {
	switch {
	case name == "":
		return required("aliasName")
	case len(name) > 256:
		return awsjson.Validation("1 validation error detected: Value at 'aliasName' failed to satisfy constraint: Member must have length less than or equal to 256")
	case !strings.HasPrefix(name, "alias/") || len(name) == len("alias/"):
		return awsjson.Validation("Alias must start with the prefix \"alias/\". Please see https://docs.aws.amazon.com/kms/latest/developerguide/kms-alias.html")
	case strings.HasPrefix(name, "alias/aws/"):
		return awsjson.Errorf(http.StatusBadRequest, "NotAuthorizedException", "Cannot create alias with prefix 'alias/aws/'")
	}
	for _, r := range name[len("alias/"):] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/_-", r)) {
			return awsjson.Validation("1 validation error detected: Value '%s' at 'aliasName' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[a-zA-Z0-9:/_-]+$", awsjson.Clip(name, 64))
		}
	}
	return nil
}

func (s *Service) createAlias(ctx context.Context, body []byte) (any, error) {
	var req struct {
		AliasName   string `json:"AliasName"`
		TargetKeyID string `json:"TargetKeyId"`
	}
	if err := awsjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	if aerr := checkAliasName(req.AliasName); aerr != nil {
		return nil, aerr
	}
	s.lockFresh()
	defer s.mu.Unlock()
	if s.keys.byAlias(req.AliasName) != nil {
		return nil, awsjson.Errorf(http.StatusBadRequest, "AlreadyExistsException", "An alias with the name %s already exists", s.aliasARN(req.AliasName))
	}
	if strings.HasPrefix(req.TargetKeyID, "alias/") || strings.Contains(req.TargetKeyID, ":alias/") {
		return nil, awsjson.Validation("Aliases must refer to keys. Not aliases")
	}
	k, aerr := s.resolve(req.TargetKeyID)
	if aerr != nil {
		return nil, aerr
	}
	k.Aliases = append(k.Aliases, req.AliasName)
	if err := s.save(); err != nil {
		k.Aliases = k.Aliases[:len(k.Aliases)-1]
		return nil, err
	}
	return struct{}{}, nil
}

func (s *Service) rotateKeyOnDemand(ctx context.Context, body []byte) (any, error) {
	var req struct {
		KeyID string `json:"KeyId"`
	}
	if err := awsjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	s.lockFresh()
	k, aerr := s.resolve(req.KeyID)
	s.mu.Unlock()
	if aerr != nil {
		return nil, aerr
	}
	if _, err := s.Rotate(ctx, k.ID); err != nil {
		return nil, err
	}
	return struct {
		KeyID string `json:"KeyId"`
	}{s.keyARN(k.ID)}, nil
}

// KeyOf names the key a request's KeyId (id, ARN, alias or alias ARN) or, with ref empty, a
// ciphertext blob's header selects, as KMS resolves it before authorizing: its ARN and its aliases.
// ok is false when neither names a key. The IAM recording of local mode (infra/local) asks it, so a
// request made through an alias is checked against the key's policy, as KMS checks it.
func (s *Service) KeyOf(ref string, blob []byte) (arn string, aliases []string, ok bool) {
	s.lockFresh()
	defer s.mu.Unlock()
	var k *key
	if ref != "" {
		k, _ = s.resolve(ref)
	} else if h, err := parseHeader(blob); err == nil {
		k = s.keys.byID(h.keyID)
	}
	if k == nil {
		return "", nil, false
	}
	return s.keyARN(k.ID), slices.Clone(k.Aliases), true
}
