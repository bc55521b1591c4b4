// Package preflight refuses, before `cdk deploy` starts CloudFormation, a deployment that would
// fail there or at the first chat.
//
// It refuses a Bedrock model id the chosen Region cannot call (a model served only through an
// inference profile, another geography's profile, a model past its end of life), and reserved
// concurrency the account cannot give. infra/cdk/check.sh deploy runs it as `go run . preflight
// <the cdk deploy arguments>`.
package preflight

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"sinew/infra/cdk/stack"
	"sinew/internal/config"
)

// MinUnreserved is what Lambda keeps unreserved in an account: "you can reserve up to the
// Unreserved account concurrency value minus 100"
// (https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html). An account whose
// limit is lower (a new account's 10, a first increase to 50) keeps all of it: Lambda answers
// "decreases account's UnreservedConcurrentExecution below its minimum value of [50]" there.
const MinUnreserved = 100

// minUnreserved is what Lambda keeps unreserved in an account of limit concurrent executions.
func minUnreserved(limit int) int { return min(MinUnreserved, limit) }

// Account reads the account's Lambda concurrency. CLI asks the AWS CLI; tests give a fake.
type Account interface {
	// Concurrency is the account's limit of concurrent executions and how many are unreserved.
	Concurrency(ctx context.Context) (limit, unreserved int, err error)
	// Reserved is a function's reserved concurrency: 0 when it has none or does not exist.
	Reserved(ctx context.Context, function string) (int, error)
}

// Input is what one deploy would do.
type Input struct {
	Settings  stack.Settings
	StackName string // the functions are named <StackName>-<function>
	Region    string // "" when none is configured
	Account   Account
}

// Run checks in and returns every refusal joined (nil: go ahead); what it could not check it says
// on w and lets pass.
func Run(ctx context.Context, in Input, w io.Writer) error {
	var refusals []error
	if in.Region == "" {
		fmt.Fprintln(w, "preflight: no Region is configured (AWS_REGION, or the profile's region), so the Bedrock models were not checked against it")
	} else {
		refusals = append(refusals, Models(in.Settings, in.Region, w)...)
	}
	if err := Concurrency(ctx, in, w); err != nil {
		refusals = append(refusals, err)
	}
	return errors.Join(refusals...)
}

// modelSetting is one Bedrock model the deployment calls and the setting that names it.
type modelSetting struct {
	key, id string
	def     bool // SINEW_MODEL's default, not set
}

func modelSettings(s stack.Settings) []modelSetting {
	var out []modelSetting
	v, set := s.Env[config.EnvModel]
	if !set {
		i := slices.IndexFunc(config.Variables(), func(v config.Var) bool { return v.Name == config.EnvModel })
		v = config.Variables()[i].Default
	}
	if m, err := config.ParseModel(v); err == nil && m.Provider == "bedrock" {
		out = append(out, modelSetting{config.EnvModel, m.Name, !set})
	}
	for _, id := range s.BedrockModels {
		if len(out) == 0 || id != out[0].id {
			out = append(out, modelSetting{stack.CtxBedrockModels, id, false})
		}
	}
	return out
}

// Models refuses each configured Bedrock model that region cannot call, naming the id to set
// instead; a model the table (infra/cdk/stack/bedrock.go) does not know is noted on w.
func Models(s stack.Settings, region string, w io.Writer) []error {
	var errs []error
	for _, m := range modelSettings(s) {
		name := fmt.Sprintf("%s: %s", m.key, m.id)
		if m.key == config.EnvModel {
			name = fmt.Sprintf("%s=bedrock:%s", m.key, m.id)
			if m.def {
				name = fmt.Sprintf("%s (not set; its default is bedrock:%s)", m.key, m.id)
			}
		}
		if !stack.KnownModel(m.id) {
			fmt.Fprintf(w, "preflight: %s is a model sinew's table (infra/cdk/stack/bedrock.go) does not know, so whether %s serves it was not checked: `aws bedrock list-inference-profiles --region %s` and `aws bedrock get-foundation-model-availability --model-id <model id> --region %s` tell\n", name, region, region, region)
		}
		problem, use := stack.ModelProblem(m.id, region)
		if problem == "" {
			continue
		}
		fix := fmt.Sprintf("no profile of it can be called from %s: choose another model (`aws bedrock list-inference-profiles --region %s`) or Region", region, region)
		switch {
		case use != "" && m.key == config.EnvModel:
			fix = fmt.Sprintf("set %s=bedrock:%s", config.EnvModel, use)
		case use != "":
			fix = fmt.Sprintf("put %s in %s instead", use, stack.CtxBedrockModels)
		}
		errs = append(errs, fmt.Errorf("%s: %s; %s", name, problem, fix))
	}
	return errs
}

// Concurrency refuses reservations that would leave the account fewer than MinUnreserved
// unreserved executions, which Lambda would refuse mid-deploy. The stack's own functions' current
// reservations count as free, since the deploy replaces them. When the account cannot be read it
// says so on w and lets pass.
func Concurrency(ctx context.Context, in Input, w io.Writer) error {
	need, held := 0, 0
	var keys []string
	for fn, n := range in.Settings.Reserved {
		need += n
		keys = append(keys, fmt.Sprintf("%s=%d", stack.ReservedConcurrencyKeys[fn], n))
	}
	if need == 0 {
		return nil
	}
	slices.Sort(keys)
	limit, unreserved, err := in.Account.Concurrency(ctx)
	if err != nil {
		fmt.Fprintf(w, "preflight: could not read the account's Lambda concurrency, so the reservations (%s) were not checked (step 4 of infra/cdk/README.md checks by hand): %v\n", strings.Join(keys, " "), err)
		return nil
	}
	for fn := range in.Settings.Reserved {
		n, err := in.Account.Reserved(ctx, in.StackName+"-"+fn)
		if err != nil {
			fmt.Fprintf(w, "preflight: could not read %s-%s's reserved concurrency, so the reservations were not checked: %v\n", in.StackName, fn, err)
			return nil
		}
		held += n
	}
	free := unreserved + held // what the stack's functions may reserve before Lambda's minimum
	keep := minUnreserved(limit)
	if free-need >= keep {
		return nil
	}
	msg := fmt.Sprintf("reserved concurrency: the account allows %d concurrent Lambda executions, %d of them unreserved", limit, unreserved)
	if held > 0 {
		msg += fmt.Sprintf(" (and %d reserved by this stack's functions now)", held)
	}
	msg += fmt.Sprintf("; reserving %s would leave %d, and Lambda keeps at least %d unreserved, so the deploy would fail at the functions and roll back. Deploy with %s=0 %s=0 (no reservation)",
		strings.Join(keys, " and "), free-need, keep, stack.CtxAPIReservedConcurrency, stack.CtxSettleReservedConcurrency)
	if room := free - keep; room > 0 {
		msg += fmt.Sprintf(", or lower them to %d together", room)
	}
	msg += ", or ask for a higher quota and deploy once it is granted: aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384 --desired-value 1000"
	return errors.New(msg)
}
