package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// RotationTag is the principal tag whose value, the stack's name, lets a principal of the account
// assume the rotation role.
const RotationTag = "sinew-rotate-secrets"

// rotationRole makes the role the rotate-secrets command runs as (internal/secrets/rotate): after
// the secrets key gets a new version, it moves every sealed value to it with KMS ReEncrypt, which
// never yields plaintext. It is a role of its own, assumed by the operator from this account,
// because no function may Scan the table and none may ReEncrypt; and it cannot Decrypt, so holding
// it reveals no secret.
func (s *Sinew) rotationRole() {
	r := awsiam.NewRole(s.Stack, jsii.String("SecretsRotationRole"), &awsiam.RoleProps{
		// Only principals of the account that the operator tagged for it: the role may Scan the
		// whole table.
		AssumedBy: awsiam.NewAccountRootPrincipal().WithConditions(&map[string]any{
			"StringEquals": map[string]any{"aws:PrincipalTag/" + RotationTag: s.name},
		}),
		Description:        jsii.String("sinew: rotate-secrets, resealing setup secrets under the key's newest version (never decrypts)"),
		MaxSessionDuration: awscdk.Duration_Hours(jsii.Number(1)),
	})
	viaDynamo := map[string]any{"StringEquals": map[string]any{"kms:ViaService": "dynamodb." + *awscdk.Aws_REGION() + ".amazonaws.com"}}
	stmts := []*awsiam.PolicyStatementProps{
		{Sid: jsii.String("ScanAndReseal"), Actions: jsii.Strings("dynamodb:Scan", "dynamodb:UpdateItem"), Resources: jsii.Strings(*s.Table.TableArn())},
		{Sid: jsii.String("TableKey"), Actions: jsii.Strings("kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey"),
			Resources: jsii.Strings(*s.TableKey.KeyArn()), Conditions: &viaDynamo},
		{Sid: jsii.String("ResealSecrets"), Actions: jsii.Strings("kms:ReEncryptFrom", "kms:ReEncryptTo"), Resources: jsii.Strings(*s.SecretsKey.KeyArn())},
	}
	for _, p := range stmts {
		r.AddToPolicy(awsiam.NewPolicyStatement(p))
	}
	// The secrets key's policy names who may use it (it does not defer to IAM): the role is added.
	s.SecretsKey.AddToResourcePolicy(s.keyUse("ResealBySecretsRotationRole", []*string{r.RoleArn()}, sinewContext(),
		"kms:ReEncryptFrom", "kms:ReEncryptTo"), jsii.Bool(false))
	s.RotationRole = r
}
