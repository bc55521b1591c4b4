package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// costHeadline is the form of a type's cost among the headline figures, which other tools read.
const costHeadline = "Cost per 1M %s calls: $%.2f (%s, %d transitions, %d DynamoDB requests)"

// partCost counts what one call of each type does (TestRequestBudget, its counts and what it
// measures), reads what the stack decides about the cost from its synthesized template, and prices
// a million calls of each type and a month of the stack standing idle.
func partCost(ctx context.Context, o options, r *report) error {
	facts, synth := loadStack(ctx, o)
	dir, err := os.MkdirTemp("", "sinew-cost-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	count := 5
	if o.smoke {
		count = 2
	}
	argv := wrapDDB(true, []string{"go", "test", "-run", "^TestRequestBudget$", "-v", "-count=" + strconv.Itoa(count), "./internal/workflow"})
	out, err := runCmd(ctx, argv, []string{"SINEW_COST_INPUTS=" + dir})
	if err != nil {
		return err
	}
	calls, err := byName(out)
	if err != nil {
		return err
	}
	files, err := readMeasured(dir)
	if err != nil {
		return err
	}
	for i := range calls {
		if err := calls[i].measure(files[calls[i].name], facts); err != nil {
			return err
		}
	}
	r.printf("cost", "Counted and measured by `TestRequestBudget` (`internal/workflow`), run %d times: one call of each type end to end, "+
		"from its start to its recorded outcome (the status-change event included), through `POST /tool-calls` (a function call "+
		"answered through `POST /executions/{id}/calls/{call_id}/result`) and through a bare `StartExecution` naming the tool. "+
		"A system tool's own operation is not counted. Times are medians over the runs. Cost of one million calls at AWS list "+
		"prices in us-east-1 as of %s, and of the stack standing idle for a month.\n\n", count, pricesRead)
	costInputs(r, calls, facts)
	costTable(r, calls, facts)
	costNotes(r, facts)
	idleSection(r, facts)
	r.printf("cost", "Sources (list prices, us-east-1, as of %s):\n\n", pricesRead)
	for _, s := range priceSources {
		r.printf("cost", "- %s\n", s)
	}
	r.printf("cost", "\nCommands:\n\n```\nSINEW_COST_INPUTS=<dir> %s\n%s\n```\n", shellJoin(argv), synth)
	return nil
}

// loadStack reads the stack's facts from -template, else from a fresh synth of infra/cdk; failing
// both, the facts as infra/cdk made them when the model was written, saying why.
func loadStack(ctx context.Context, o options) (stackFacts, string) {
	if o.template != "" {
		f, err := readStack(o.template)
		if err != nil {
			return assumedFacts("could not read -template: " + oneLine(err)), "(the template given with -template " + o.template + ")"
		}
		return f, "(the template given with -template " + o.template + ")"
	}
	dir, err := os.MkdirTemp("", "sinew-synth-")
	if err != nil {
		return assumedFacts("no synth: " + oneLine(err)), ""
	}
	defer os.RemoveAll(dir)
	path, argv, err := synthTemplate(ctx, dir)
	cmd := "CDK_OUTDIR=<dir> CDK_CONTEXT_JSON=<infra/cdk/cdk.json's context, aws:cdk:bundling-stacks []> " + shellJoin(argv)
	if err != nil {
		return assumedFacts("the synth failed: " + oneLine(err)), cmd
	}
	f, err := readStack(path)
	if err != nil {
		return assumedFacts("the template did not read: " + oneLine(err)), cmd
	}
	f.source = "infra/cdk synthesized with its default settings in this run"
	return f, cmd
}

// costInputs is the table of what each call does, measured and counted.
func costInputs(r *report, calls []callInputs, f stackFacts) {
	r.printf("cost", "What one call does:\n\n| type | started by | state transitions | history events | Lambda invocations (median time, memory) | "+
		"HTTP requests | DynamoDB requests | of which | request units | custom events | log bytes | X-Ray traces before sampling |\n"+
		"|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range calls {
		typ, entry, _ := typeOf(c.name)
		logs := "–"
		if c.samples > 0 {
			logs = fmt.Sprintf("%.0f (Step Functions %d, functions' own %.0f)", c.logBytes(f), c.sfnLogBytes, c.appLogBytes)
		}
		units := c.units
		if len(c.otherUnits) > 0 {
			units += " (other runs: " + strings.Join(c.otherUnits, "; ") + ")"
		}
		r.printf("cost", "| %s | %s | %d | %d | %s | %d | %d | %s | %s | %.0f | %s | %.0f |\n", typ, entry, c.transitions, c.historyEvents,
			c.runsText(f), c.https, c.ddbRequests, c.ops, units, c.events(f), logs, c.traces(f))
	}
	r.printf("cost", "\n")
}

// costTable is the table of what a million calls cost by service, with the headline lines and the
// goals.
func costTable(r *report, calls []callInputs, f stackFacts) {
	r.printf("cost", "Cost of one million calls by service, $:\n\n| type | started by | Step Functions | Lambda | DynamoDB | API Gateway | "+
		"EventBridge | CloudWatch Logs | X-Ray | KMS | total $ per 1M calls |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	var g callGoals
	for _, c := range calls {
		typ, entry, bare := typeOf(c.name)
		b := c.cost(f)
		r.printf("cost", "| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | **%.2f** |\n",
			typ, entry, b.sfn, b.lambda, b.ddb, b.apigw, b.events, b.logs, b.xray, b.kms, b.total())
		if !bare {
			r.headline(costHeadline, typ, b.total(), c.workflow(), c.transitions, c.ddbRequests)
			r.headline("%s", breakdownLine(typ+" ("+c.workflow()+")", b))
		}
		g.add(c, b.total())
	}
	g.report(r)
	r.printf("cost", "\n")
}

// breakdownLine names each service's share of a type's cost, for the headline figures.
func breakdownLine(typ string, b breakdown) string {
	return fmt.Sprintf("Cost breakdown per 1M %s calls: Step Functions $%.2f, Lambda $%.2f, DynamoDB $%.2f, API Gateway $%.2f, "+
		"EventBridge $%.2f, CloudWatch Logs $%.2f, X-Ray $%.2f, KMS $%.2f", typ, b.sfn, b.lambda, b.ddb, b.apigw, b.events, b.logs, b.xray, b.kms)
}

// callGoals gathers the worst of each call-path figure over the types, for the goals table.
type callGoals struct {
	seen                                  bool
	postTransitions, postLambdas, postDDB int // server-side calls through POST /tool-calls
	fnTransitions, fnDDB, bareTransitions int
	maxCost, expressMax, fnCost           float64
	fn                                    callInputs // the function call through POST /tool-calls
}

func (g *callGoals) add(c callInputs, total float64) {
	g.seen = true
	base, bare := strings.CutSuffix(c.name, "/start")
	switch {
	case bare:
		g.bareTransitions = max(g.bareTransitions, c.transitions)
	case c.express():
		g.expressMax = max(g.expressMax, total)
	case base == "ask_user":
		g.fnTransitions, g.fnDDB = max(g.fnTransitions, c.transitions), max(g.fnDDB, c.ddbRequests)
		g.maxCost, g.fnCost = max(g.maxCost, total), max(g.fnCost, total)
		g.fn = c
	default:
		g.postTransitions, g.postLambdas, g.postDDB = max(g.postTransitions, c.transitions), max(g.postLambdas, c.inside), max(g.postDDB, c.ddbRequests)
		g.maxCost = max(g.maxCost, total)
	}
}

func (g *callGoals) report(r *report) {
	if !g.seen {
		return
	}
	r.goal("state transitions, server-side call through POST /tool-calls", "≤ 2", g.postTransitions <= 2, "%d", g.postTransitions)
	r.goal("Lambda invocations inside the state machine, server-side call", "1", g.postLambdas == 1, "%d", g.postLambdas)
	r.goal("DynamoDB requests, server-side call through POST /tool-calls", "≤ 4", g.postDDB <= 4, "%d", g.postDDB)
	r.goal("DynamoDB requests, function call with its answer over the HTTP route", "≤ 5", g.fnDDB <= 5, "%d", g.fnDDB)
	r.goal("state transitions, function call", "≤ 2", g.fnTransitions <= 2, "%d", g.fnTransitions)
	r.goal("state transitions, a bare start naming only the tool", "≤ 3", g.bareTransitions <= 3, "%d", g.bareTransitions)
	r.goal("cost per million calls through POST /tool-calls on tool_call (Standard), the dearest type, every service counted", "≤ $55", g.maxCost <= 55, "$%.2f", g.maxCost)
	if g.expressMax > 0 {
		r.goal("cost per million server-side calls answered in the request (Express), the dearest type, every service counted", "≤ $5.00", g.expressMax <= 5, "$%.2f", g.expressMax)
	}
	r.goal("cost per million function calls (Standard, the answer over the HTTP route), every service counted", "≤ $30", g.fnCost <= 30, "$%.2f", g.fnCost)
	if g.fn.name != "" {
		g.reportFloor(r)
	}
}

// reportFloor gives what a function call costs by the request alone, whatever sinew stores, logs
// or traces: the part of its figure no change of sinew's writes can take away.
func (g *callGoals) reportFloor(r *report) {
	c, m := g.fn, 1e6
	sfn, apigw := c.sfnCost()*m, float64(c.https)*apigwPerRequest*m
	lambda := float64(c.inside+c.outside) * lambdaPerRequest * m
	least := 2 * ddbPerWrite * m // the call put and answered, one write unit each
	r.printf("cost", "\nA function call's floor at these prices, by its requests alone: Step Functions $%.2f (%d transitions), "+
		"API Gateway $%.2f (%d requests: the start and the answer), Lambda $%.2f (%d invocations' request charge): $%.2f; "+
		"with the least DynamoDB a waiting call needs (its item put and answered, a write unit each) $%.2f. "+
		"The rest of its $%.2f is what sinew writes, logs, traces and announces.\n",
		sfn, c.transitions, apigw, c.https, lambda, c.inside+c.outside, sfn+apigw+lambda, sfn+apigw+lambda+least, g.fnCost)
}
