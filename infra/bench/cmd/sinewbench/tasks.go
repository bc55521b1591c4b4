package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
)

// taskHeadline is the form of a Julep task execution's cost among the headline figures.
const taskHeadline = "Cost per 1M Julep task executions (%s): $%.2f (%s, %d transitions, %d DynamoDB requests)"

// taskShapes are TestTaskRequestBudget's tasks as the report names their steps.
var taskShapes = map[string]string{"task/evaluate+tool_call+return": "evaluate + tool_call (integration) + return"}

// partTasks counts and measures one execution of a representative compiled Julep task
// (TestTaskRequestBudget) and prices a million of them as partCost prices calls: the transitions
// of the task's machine and of its tool_call child, every Lambda invocation at its measured time,
// DynamoDB's request units as DynamoDB reports them, the HTTP request, the logs and X-Ray.
func partTasks(ctx context.Context, o options, r *report) error {
	facts, synth := loadStack(ctx, o)
	count := 5
	if o.smoke {
		count = 2
	}
	tasks, argv, err := countAndMeasure(ctx, "TestTaskRequestBudget", count, facts)
	if err != nil {
		return err
	}
	r.printf("tasks", "Counted and measured by `TestTaskRequestBudget` (`internal/workflow`), run %d times: one execution of a compiled Julep "+
		"task end to end, started by `POST /tasks/{id}/executions` on the task's Standard state machine, its tool step a `tool_call` "+
		"child execution (a bare start naming the tool: Dispatch, Prepare, Prepared, Dispatch), until both executions' status-change "+
		"events are settled. Its transitions are every state entered in the task's execution and its child's (the compiler's Start "+
		"and Done Pass states among them). Priced as section 5 prices a call, at the same list prices (us-east-1, as of %s) and with "+
		"the same stack facts. No prompt step: the harness has no agent_loop machine and scripted model, so a prompt step's cost "+
		"(an agent_loop child and its model calls) is not measured here.\n\n", count, pricesRead)
	taskTables(r, tasks, facts)
	r.printf("tasks", "\nCommands:\n\n```\nSINEW_COST_INPUTS=<dir> %s\n%s\n```\n", shellJoin(argv), synth)
	return nil
}

// taskTables are the tables of what each task execution does and costs, with the headline lines.
func taskTables(r *report, tasks []callInputs, facts stackFacts) {
	r.printf("tasks", "| task | state transitions | history events | Lambda invocations (median time, memory) | HTTP requests | "+
		"DynamoDB requests | of which | request units | log bytes | X-Ray traces before sampling |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range tasks {
		r.printf("tasks", "| %s | %d | %d | %s | %d | %d | %s | %s | %.0f (Step Functions %d, functions' own %.0f) | %.0f |\n",
			taskShape(c.name), c.transitions, c.historyEvents, c.runsText(facts), c.https, c.ddbRequests, c.ops, c.units,
			c.logBytes(facts), c.sfnLogBytes, c.appLogBytes, c.traces(facts))
	}
	r.printf("tasks", "\nCost of one million task executions by service, $:\n\n| task | Step Functions | Lambda | DynamoDB | API Gateway | "+
		"EventBridge | CloudWatch Logs | X-Ray | KMS | total $ per 1M executions |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range tasks {
		b := c.cost(facts)
		r.printf("tasks", "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | **%.2f** |\n",
			taskShape(c.name), b.sfn, b.lambda, b.ddb, b.apigw, b.events, b.logs, b.xray, b.kms, b.total())
		r.headline(taskHeadline, taskShape(c.name), b.total(), c.workflow(), c.transitions, c.ddbRequests)
	}
}

func taskShape(name string) string {
	if s, ok := taskShapes[name]; ok {
		return s
	}
	return name
}

// countAndMeasure runs the budget test named test count times with SINEW_COST_INPUTS set, and
// gives what each of its runs did (the counts of its lines, the medians of what it measured) and
// the command.
func countAndMeasure(ctx context.Context, test string, count int, facts stackFacts) ([]callInputs, []string, error) {
	dir, err := os.MkdirTemp("", "sinew-cost-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	argv := wrapDDB(true, []string{"go", "test", "-run", "^" + test + "$", "-v", "-count=" + strconv.Itoa(count), "./internal/workflow"})
	out, err := runCmd(ctx, argv, []string{"SINEW_COST_INPUTS=" + dir})
	if err != nil {
		return nil, nil, err
	}
	calls, err := byName(out)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", test, err)
	}
	files, err := readMeasured(dir)
	if err != nil {
		return nil, nil, err
	}
	for i := range calls {
		if len(files[calls[i].name]) == 0 {
			return nil, nil, fmt.Errorf("%s wrote no measurements of %s", test, calls[i].name)
		}
		if err := calls[i].measure(files[calls[i].name], facts); err != nil {
			return nil, nil, err
		}
	}
	return calls, argv, nil
}
