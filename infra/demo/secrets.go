package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// checkSecrets looks for every setup secret of the run, in plain text, wherever sinew writes:
// local mode's log, every HTTP API answer the demo got, the Step Functions histories of every
// execution, every DynamoDB item, and the demo's own output. It names the secret and the place,
// never the value.
func (d *demo) checkSecrets(ctx context.Context) (string, error) {
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider(d.awsEnv["AWS_ACCESS_KEY_ID"], d.awsEnv["AWS_SECRET_ACCESS_KEY"], "")}
	places := map[string]string{}
	logText, err := os.ReadFile(d.localLog)
	if err != nil {
		return "", fmt.Errorf("reading local mode's log: %w", err)
	}
	places["local mode's log"] = string(logText)
	places["the HTTP API's answers"] = d.answers.String()

	histories, nExec, nEvents, err := d.histories(ctx, cfg)
	if err != nil {
		return "", err
	}
	places["the Step Functions histories"] = histories
	items, nItems, err := d.tableItems(ctx, cfg)
	if err != nil {
		return "", err
	}
	places["DynamoDB"] = items
	d.mu.Lock()
	places["the demo's output"] = d.printed.String()
	d.mu.Unlock()

	if err := findLeak(d.secrets, places); err != nil {
		return "", err
	}
	d.detail("searched local mode's log (%d lines), %d API answers, %d history events of %d executions (and %d calls on tool_call_express, "+
		"which keeps no history), %d DynamoDB items, the demo's output",
		strings.Count(string(logText), "\n"), d.nAnswers, nEvents, nExec, d.expressCalls, nItems)
	return fmt.Sprintf("none of the %d setup secrets is anywhere in plain text", len(d.secrets)), nil
}

// histories is the JSON of every history event of every execution of every state machine.
func (d *demo) histories(ctx context.Context, cfg aws.Config) (string, int, int, error) {
	c := sfn.NewFromConfig(cfg, func(o *sfn.Options) { o.BaseEndpoint = aws.String(d.endpoints["stepfunctions"]) })
	var b strings.Builder
	nExec, nEvents := 0, 0
	machines := sfn.NewListStateMachinesPaginator(c, &sfn.ListStateMachinesInput{})
	for machines.HasMorePages() {
		page, err := machines.NextPage(ctx)
		if err != nil {
			return "", 0, 0, fmt.Errorf("ListStateMachines: %w", err)
		}
		for _, m := range page.StateMachines {
			execs := sfn.NewListExecutionsPaginator(c, &sfn.ListExecutionsInput{StateMachineArn: m.StateMachineArn})
			for execs.HasMorePages() {
				ep, err := execs.NextPage(ctx)
				if err != nil {
					return "", 0, 0, fmt.Errorf("ListExecutions %s: %w", aws.ToString(m.Name), err)
				}
				for _, x := range ep.Executions {
					nExec++
					hist := sfn.NewGetExecutionHistoryPaginator(c, &sfn.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn})
					for hist.HasMorePages() {
						hp, err := hist.NextPage(ctx)
						if err != nil {
							return "", 0, 0, fmt.Errorf("GetExecutionHistory %s: %w", aws.ToString(x.Name), err)
						}
						nEvents += len(hp.Events)
						raw, _ := json.Marshal(hp.Events)
						b.Write(raw)
					}
				}
			}
		}
	}
	if nExec < len(d.executions) {
		return "", 0, 0, fmt.Errorf("the Step Functions API lists %d executions, but the demo started %d", nExec, len(d.executions))
	}
	return b.String(), nExec, nEvents, nil
}

// tableItems is the text of every value (strings and bytes as they are) of every item of every table.
func (d *demo) tableItems(ctx context.Context, cfg aws.Config) (string, int, error) {
	c := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(d.endpoints["aws"]) })
	tables, err := c.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		return "", 0, fmt.Errorf("ListTables: %w", err)
	}
	var b strings.Builder
	n := 0
	for _, t := range tables.TableNames {
		scan := dynamodb.NewScanPaginator(c, &dynamodb.ScanInput{TableName: aws.String(t)})
		for scan.HasMorePages() {
			page, err := scan.NextPage(ctx)
			if err != nil {
				return "", 0, fmt.Errorf("scanning %s: %w", t, err)
			}
			n += len(page.Items)
			for _, it := range page.Items {
				for _, v := range it {
					writeValue(&b, v)
				}
			}
		}
	}
	return b.String(), n, nil
}

// writeValue writes the strings and bytes inside an attribute value, one a line.
func writeValue(b *strings.Builder, v types.AttributeValue) {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		b.WriteString(x.Value)
	case *types.AttributeValueMemberB:
		b.Write(x.Value)
	case *types.AttributeValueMemberSS:
		b.WriteString(strings.Join(x.Value, "\n"))
	case *types.AttributeValueMemberBS:
		for _, e := range x.Value {
			b.Write(e)
			b.WriteByte('\n')
		}
	case *types.AttributeValueMemberL:
		for _, e := range x.Value {
			writeValue(b, e)
		}
	case *types.AttributeValueMemberM:
		for k, e := range x.Value {
			b.WriteString(k)
			b.WriteByte('\n')
			writeValue(b, e)
		}
	}
	b.WriteByte('\n')
}

// errLeak is returned when a secret is found; it names where, never the value.
var errLeak = errors.New("a setup secret is in plain text")

// findLeak reports the first secret (by what it is for, never its value) found in a place.
func findLeak(secrets, places map[string]string) error {
	names := make([]string, 0, len(places))
	for p := range places {
		names = append(names, p)
	}
	sort.Strings(names)
	whats := make([]string, 0, len(secrets))
	for w := range secrets {
		whats = append(whats, w)
	}
	sort.Strings(whats)
	for _, what := range whats {
		if secrets[what] == "" {
			continue // nothing to leak, and "" is in every text
		}
		for _, p := range names {
			if strings.Contains(places[p], secrets[what]) {
				return fmt.Errorf("%w: %s is in %s", errLeak, what, p)
			}
		}
	}
	return nil
}
