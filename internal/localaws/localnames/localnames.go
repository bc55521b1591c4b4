// Package localnames holds the names local mode (infra/local) gives what internal/deploy describes,
// where a deployment gets them from its stack.
//
// They are the account and Region, the table, the event bus, the secrets key's alias, the ARNs of
// functions and state machines. Local mode runs with them and the IAM check
// (infra/scripts/iamcheck) maps a synthesized template onto them, so the two agree.
package localnames

import (
	"fmt"

	"sinew/internal/deploy"
	"sinew/internal/localaws/kms"
)

const (
	Region          = "us-east-1"
	Account         = "000000000000"
	Table           = "sinew"
	EventBus        = "default" // PutEvents' bus when the entry names none
	SecretsKeyAlias = kms.DefaultAlias
	// StatusChangeRule stands for the EventBridge rule that sends Execution Status Change events to
	// the function triggered by deploy.TriggerExecutionChanged: local mode delivers them itself.
	StatusChangeRule = "sinew-" + string(deploy.TriggerExecutionChanged)
	// SweepRule stands for the schedule rule that invokes the function triggered by
	// deploy.TriggerSweep: local mode runs it on its own timer (--sweep-period).
	SweepRule = "sinew-" + string(deploy.TriggerSweep)
)

// FunctionARN is the ARN of function name.
func FunctionARN(name string) string {
	return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", Region, Account, name)
}

// StateMachineARN is the ARN of state machine name.
func StateMachineARN(name string) string {
	return fmt.Sprintf("arn:aws:states:%s:%s:stateMachine:%s", Region, Account, name)
}

// TableARN is the ARN of table name.
func TableARN(name string) string {
	return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", Region, Account, name)
}

// EventBusARN is the ARN of event bus name.
func EventBusARN(name string) string {
	return fmt.Sprintf("arn:aws:events:%s:%s:event-bus/%s", Region, Account, name)
}

// RuleARN is the ARN of EventBridge rule name on the default bus.
func RuleARN(name string) string {
	return fmt.Sprintf("arn:aws:events:%s:%s:rule/%s", Region, Account, name)
}

// Value is what local mode puts where a deployment puts v: a state machine definition's
// substitution or a function's variable.
func Value(v deploy.Value) (string, error) {
	switch v.Kind {
	case deploy.FunctionARN:
		return FunctionARN(v.Target), nil
	case deploy.FunctionName:
		return v.Target, nil
	case deploy.StateMachineARN:
		return StateMachineARN(v.Target), nil
	case deploy.TableName:
		return Table, nil
	case deploy.SecretsKeyID:
		return SecretsKeyAlias, nil
	case deploy.EventBusName:
		return EventBus, nil
	}
	return "", fmt.Errorf("no local value for a %s", v.Kind)
}
