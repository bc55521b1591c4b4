package sfnapi

import (
	"errors"
	"net/http"
	"regexp"
	"strings"

	"sinew/internal/asl"
	"sinew/internal/fault"
	"sinew/internal/localaws/awsjson"
)

// Step Functions answers every modelled error with HTTP 400 and `{"__type", "message"}`.
func apiErr(code, format string, args ...any) *awsjson.Error {
	return awsjson.Errorf(http.StatusBadRequest, code, format, args...)
}

func invalidArn(arn string) *awsjson.Error {
	if !strings.HasPrefix(arn, "arn:") {
		return apiErr("InvalidArn", "Invalid Arn: 'Invalid ARN prefix: %s'", awsjson.Clip(arn, 256))
	}
	return apiErr("InvalidArn", "Invalid Arn: 'Resource type not valid in this context: %s'", awsjson.Clip(arn, 256))
}

func required(member string) *awsjson.Error {
	return awsjson.Validation("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", member)
}

func tooLong(member string, n int) *awsjson.Error {
	return awsjson.Validation("1 validation error detected: Value at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", member, n)
}

// nameRE is what AWS accepts in state machine and execution names: no whitespace, brackets,
// wildcards, the listed punctuation or control characters.
var nameRE = regexp.MustCompile("^[^\\s<>{}\\[\\]?*\"#%\\\\^|~`$&,;:/\\x00-\\x1f\\x7f]{1,80}$")

func checkName(name string) *awsjson.Error {
	if !nameRE.MatchString(name) {
		return apiErr("InvalidName", "Invalid Name: '%s'", awsjson.Clip(name, 256))
	}
	return nil
}

// engineErr turns the engine's errors into the API's: an *asl.APIError keeps its code and message;
// other typed faults get the code their kind means for executions.
func engineErr(err error) error {
	var ae *asl.APIError
	var fe *fault.Error
	hasFault := errors.As(err, &fe)
	if errors.As(err, &ae) {
		msg := ae.Message
		if hasFault && fe.Msg != "" {
			msg = fe.Msg
		}
		return apiErr(ae.Code, "%s", msg)
	}
	if hasFault {
		switch fe.Kind {
		case fault.InvalidInput:
			if rest, ok := strings.CutPrefix(fe.Msg, "ValidationException: "); ok {
				return awsjson.Validation("%s", rest)
			}
			if rest, ok := strings.CutPrefix(fe.Msg, "InvalidName: "); ok {
				return apiErr("InvalidName", "%s", rest)
			}
			return apiErr("InvalidExecutionInput", "%s", fe.Msg)
		case fault.TooLarge:
			return apiErr("InvalidExecutionInput", "%s", fe.Msg)
		case fault.Conflict:
			return apiErr("ExecutionAlreadyExists", "%s", fe.Msg)
		case fault.NotFound:
			return apiErr("ExecutionDoesNotExist", "%s", fe.Msg)
		}
	}
	return err
}
