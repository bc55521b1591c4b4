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

// notMadeAtRunTime are calls the analysis reports that the function cannot make, each with the
// reason. The analysis is context-insensitive: store.parallel runs the closures of both openAll
// (which opens sealed values) and sealSetup (which seals them), so every caller of one seems to
// reach the other. The test fails when an entry is no longer reported, so the list cannot go stale.
var notMadeAtRunTime = map[string]map[string]string{
	"api":         {"kms:Decrypt": "the api function seals and never opens: its writes reach sealSetup, and through store.parallel the analysis also reaches openAll"},
	"integration": {"kms:GenerateDataKey": "the executors open setup values (openAll) and never write them; store.parallel joins sealSetup's closure in the analysis"},
	"apicall":     {"kms:GenerateDataKey": "the executors open setup values (openAll) and never write them; store.parallel joins sealSetup's closure in the analysis"},
}

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
		IndexConst: "sinew/internal/store." + "GSI1"})
	if err != nil {
		t.Fatal(err)
	}
	// Every optional grant switched on: an OpenAI-compatible endpoint's key and a Bedrock model.
	s := synth(t, map[string]any{"SINEW_OPENAI_BASE_URL": "https://llm.example.com/v1", CtxBedrockModels: "anthropic.claude-3-haiku-20240307-v1:0"})
	pols := s.rolePolicies(t)
	for _, f := range deploy.Functions() {
		t.Run(f.Name, func(t *testing.T) {
			need := neededActions(calls[f.Name])
			for a, why := range notMadeAtRunTime[f.Name] {
				if !need[a] {
					t.Errorf("%s is no longer reported (%s): remove it from notMadeAtRunTime", a, why)
				}
				delete(need, a)
			}
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
					t.Errorf("the code calls %s, which the role does not grant", a)
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

// neededActions turns calls into IAM actions; a Query on the index is "dynamodb:Query(index)".
func neededActions(c awscalls.Calls) map[string]bool {
	out := map[string]bool{}
	for op := range c.Ops {
		svc, name, _ := strings.Cut(op, "/")
		switch svc + "/" + name {
		case "dynamodb/TransactWriteItems", "dynamodb/TransactGetItems":
			// Authorized by the item actions the transaction holds (TransactItems below).
		case "lambda/Invoke":
			out["lambda:InvokeFunction"] = true
		case "bedrockruntime/Converse", "bedrockruntime/InvokeModel":
			out["bedrock:InvokeModel"] = true
		case "bedrockruntime/ConverseStream", "bedrockruntime/InvokeModelWithResponseStream":
			out["bedrock:InvokeModelWithResponseStream"] = true
		case "kms/ReEncrypt":
			out["kms:ReEncryptFrom"], out["kms:ReEncryptTo"] = true, true
		default:
			prefix := map[string]string{"dynamodb": "dynamodb", "sfn": "states", "eventbridge": "events", "kms": "kms",
				"secretsmanager": "secretsmanager", "lambda": "lambda"}[svc]
			if prefix == "" {
				prefix = "unmapped-" + svc // fails the comparison: map the new service here
			}
			out[prefix+":"+name] = true
		}
	}
	for it := range c.TransactItems {
		out["dynamodb:"+map[string]string{"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
			"ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}[it]] = true
	}
	if c.Index {
		out["dynamodb:Query(index)"] = true
	}
	return out
}

// grantedActions are the actions of a role's statements that serve its code.
func grantedActions(sts []statement) map[string]bool {
	out := map[string]bool{}
	for _, st := range sts {
		switch st.Sid {
		case "OwnLogs", "TableKeyRead", "TableKeyWrite":
			continue // the platform's: Lambda's logs, and the table key as DynamoDB uses it
		}
		index := contains(st.Resources, "/index/"+store.GSI1)
		for _, a := range st.Actions {
			switch {
			case strings.HasPrefix(a, "xray:"), strings.HasPrefix(a, "sqs:"):
				// Active tracing, and Lambda's on-failure destination.
			case index:
				out[a+"(index)"] = true
			default:
				out[a] = true
			}
		}
	}
	return out
}
