package stack

import (
	"slices"
	"strings"
	"testing"

	"sinew/infra/cdk/awscalls"
	"sinew/internal/config"
	"sinew/internal/deploy"
	"sinew/internal/store"
)

// TestGrantsMatchCode holds each function's IAM grants against the AWS calls its code can make,
// found by awscalls in the packages the function links: a grant no call uses, or a call nothing
// grants, fails it. Grants that serve the platform rather than the code (its own logs, X-Ray, the
// on-failure destination, the table key DynamoDB uses for it) are left out; KMS calls of a function
// not given the secrets key (SINEW_SECRETS_KEY) are unreachable at run time, since the envelope
// is made only from that key.
func TestGrantsMatchCode(t *testing.T) {
	var names []string
	for _, f := range deploy.Functions() {
		names = append(names, f.Name)
	}
	calls, err := awscalls.Analyze(awscalls.Options{Root: repoRoot(t), Module: "sinew", Functions: names,
		IndexConsts: []string{"sinew/internal/store." + "GSI1", "sinew/internal/store." + "GSI2"}})
	if err != nil {
		t.Fatal(err)
	}
	// Every optional grant switched on: an OpenAI-compatible endpoint's key, a Bedrock model and
	// developers' functions for aws_lambda tools.
	s := synth(t, map[string]any{"SINEW_OPENAI_BASE_URL": "https://llm.example.com/v1", CtxBedrockModels: "amazon.nova-micro-v1:0,eu.anthropic.claude-haiku-4-5-20251001-v1:0",
		config.EnvLambdaTools: "tools-*"})
	pols := s.rolePolicies(t)
	for _, f := range deploy.Functions() {
		t.Run(f.Name, func(t *testing.T) {
			need, via := neededActions(calls[f.Name])
			if !slices.Contains(f.Env, config.EnvSecretsKey) {
				for a := range need {
					if strings.HasPrefix(a, "kms:") {
						delete(need, a)
					}
				}
			}
			got := grantedActions(pols[f.Name])
			for _, a := range awscalls.Sorted(need) {
				if !got[a] {
					t.Errorf("the code calls %s, which the role does not grant; it is reached by\n\t%s", a, strings.Join(via[a], "\n\t"))
				}
			}
			for _, a := range awscalls.Sorted(got) {
				if !need[a] {
					t.Errorf("the role grants %s, which the code never calls", a)
				}
			}
		})
	}
}

// neededActions turns calls into IAM actions; a Query on the index is "dynamodb:Query(index)". via
// gives an action the chain of calls to an operation it authorizes (a transaction's item action,
// the transaction's; the index, the Query's).
func neededActions(c awscalls.Calls) (need map[string]bool, via map[string][]string) {
	need, via = map[string]bool{}, map[string][]string{}
	add := func(a, op string) {
		need[a] = true
		if via[a] == nil {
			via[a] = c.Via[op]
		}
	}
	for _, op := range awscalls.Sorted(c.Ops) {
		for _, a := range iamActions(op) {
			add(a, op)
		}
	}
	for _, it := range awscalls.Sorted(c.TransactItems) {
		op := "dynamodb/TransactWriteItems"
		if it == "Get" {
			op = "dynamodb/TransactGetItems"
		}
		add("dynamodb:"+map[string]string{"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
			"ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}[it], op)
	}
	for _, ix := range awscalls.Sorted(c.Indexes) {
		add("dynamodb:Query(index "+ix+")", awscalls.IndexVia+ix)
	}
	return need, via
}

// iamActions are the IAM actions that authorize the SDK operation op (service/Operation).
func iamActions(op string) []string {
	svc, name, _ := strings.Cut(op, "/")
	switch op {
	case "dynamodb/TransactWriteItems", "dynamodb/TransactGetItems":
		return nil // authorized by the item actions the transaction holds (Calls.TransactItems)
	case "lambda/Invoke":
		return []string{"lambda:InvokeFunction"}
	case "bedrockruntime/Converse", "bedrockruntime/InvokeModel":
		return []string{"bedrock:InvokeModel"}
	case "bedrockruntime/ConverseStream", "bedrockruntime/InvokeModelWithResponseStream":
		return []string{"bedrock:InvokeModelWithResponseStream"}
	case "kms/ReEncrypt":
		return []string{"kms:ReEncryptFrom", "kms:ReEncryptTo"}
	case "sfn/CreateStateMachine", "sfn/UpdateStateMachine":
		// Both give the machine its role, which IAM checks the caller may pass.
		return []string{"states:" + name, "iam:PassRole"}
	}
	prefix := map[string]string{"dynamodb": "dynamodb", "sfn": "states", "eventbridge": "events", "kms": "kms",
		"secretsmanager": "secretsmanager", "lambda": "lambda"}[svc]
	if prefix == "" {
		prefix = "unmapped-" + svc // fails the comparison: map the new service here
	}
	return []string{prefix + ":" + name}
}

// grantedActions are the actions of a role's statements that serve its code.
func grantedActions(sts []statement) map[string]bool {
	out := map[string]bool{}
	for _, st := range sts {
		switch st.Sid {
		case "OwnLogs", "TableKeyRead", "TableKeyWrite":
			continue // the platform's: Lambda's logs, and the table key as DynamoDB uses it
		}
		index := ""
		for _, ix := range []string{store.GSI1, store.GSI2} {
			if contains(st.Resources, "/index/"+ix) {
				index = ix
			}
		}
		for _, a := range st.Actions {
			switch {
			case strings.HasPrefix(a, "xray:"), strings.HasPrefix(a, "sqs:"):
				// Active tracing, and Lambda's on-failure destination.
			case index != "":
				out[a+"(index "+index+")"] = true
			default:
				out[a] = true
			}
		}
	}
	return out
}
