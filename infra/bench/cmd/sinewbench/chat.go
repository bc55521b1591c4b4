package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
)

// The chat turn: its DynamoDB requests as TestChatRequestBudget counts and holds them, and the
// turn's own time over the model's and the tools' (BenchmarkChatTurn).

var (
	// chatHeadline is the chat turn's headline in the form other tools read, and nothing else.
	chatHeadline = regexp.MustCompile(`^Chat turn: (\d+) DynamoDB requests without a tool call, (\d+) with one integration call$`)
	// chatBudgetLine is one case of TestChatRequestBudget.
	chatBudgetLine = regexp.MustCompile(`chat turn, (.+?): DynamoDB map\[(.*?)\] \((\d+) requests\)`)
)

// The cases of TestChatRequestBudget the headline gives, and their budgets (the test holds them).
const (
	chatNoTool  = "no tool call"
	chatOneCall = "one integration call"
)

func chatHeadlineText(noTool, oneCall int) string {
	return fmt.Sprintf("Chat turn: %d DynamoDB requests without a tool call, %d with one integration call", noTool, oneCall)
}

type chatCount struct {
	ops   string
	total int
}

func partChat(ctx context.Context, o options, r *report) error {
	argv := wrapDDB(true, []string{"go", "test", "-run", "^TestChatRequestBudget$", "-v", "-count=1", "./internal/e2e/"})
	out, err := runCmd(ctx, argv, nil)
	if err != nil {
		return err
	}
	counts, order := map[string]chatCount{}, []string{}
	for _, m := range chatBudgetLine.FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.Atoi(m[3])
		counts[m[1]], order = chatCount{ops: m[2], total: n}, append(order, m[1])
	}
	a, okA := counts[chatNoTool]
	b, okB := counts[chatOneCall]
	if !okA || !okB {
		return fmt.Errorf("TestChatRequestBudget printed no counts for %q and %q (run with -v): %s", chatNoTool, chatOneCall, trim(string(out), 500))
	}
	t, n := bt(o, "200x", 5)
	g := goBench{pkg: "./internal/e2e/", bench: "^BenchmarkChatTurn$", benchtime: t, count: n, ddb: true}
	res, err := g.run(ctx)
	if err != nil {
		return err
	}
	r.printf("chat", "One chat turn (`chat.Service.Chat`: the request's message, one or two model calls to a scripted "+
		"OpenAI-compatible server on loopback, the integration executor in process) over DynamoDB Local, its requests counted by "+
		"`internal/awscount` on the client the chat and the executor share (the executor's own included) in `TestChatRequestBudget`, "+
		"which holds a turn to at most 8 without a tool call and 10 with one integration call. A turn claims the session with one "+
		"UpdateItem that reads it, reads the rest in one BatchGetItem and two Queries at once, and writes once at its end; a step that "+
		"runs a call adds its model reply saved before the call runs, the result saved as it comes, and the executor's own three.\n\n")
	r.printf("chat", "| case | DynamoDB requests | of which |\n|---|---|---|\n")
	for _, name := range order {
		r.printf("chat", "| %s | %d | %s |\n", name, counts[name].total, counts[name].ops)
	}
	r.printf("chat", "\nTime per turn in `BenchmarkChatTurn` (a fresh session each turn), ms, median and min–max over %d runs: the turn's wall time, the time "+
		"inside the model's Converse and the executor Lambdas' invocations, the turn's own time over them (the overhead), and how much of "+
		"the overhead had a DynamoDB request of the chat's under way (overlapping requests counted once).\n\n", n)
	r.printf("chat", "| case | turn | model | tools | overhead | of which DynamoDB Local | DynamoDB requests |\n|---|---|---|---|---|---|---|\n")
	over := map[string]samples{}
	for _, c := range []string{"no_tool_call", "one_integration_call"} {
		name := "BenchmarkChatTurn/" + c
		ms := func(unit string) (string, samples) {
			s := res.get(name, unit)
			lo, hi := s.spread()
			return fmt.Sprintf("%.2f (%.2f–%.2f)", s.median()/1e6, lo/1e6, hi/1e6), s
		}
		turn, _ := ms("ns/op")
		model, _ := ms("model-ns/turn")
		tools, _ := ms("tools-ns/turn")
		ov, ovS := ms("overhead-ns/turn")
		ddb, ddbS := ms("ddb-ns/turn")
		over[c], over[c+"/ddb"] = ovS, ddbS
		r.printf("chat", "| %s | %s | %s | %s | %s | %s | %.0f |\n", c, turn, model, tools, ov, ddb, res.get(name, "ddb-requests/turn").median())
	}
	r.printf("chat", "\nCommands:\n\n```\n%s\n%s\n```\n", shellJoin(argv), g.command())
	h := chatHeadlineText(a.total, b.total)
	if !chatHeadline.MatchString(h) {
		return fmt.Errorf("the chat headline %q is not in the form other tools read", h)
	}
	r.headline("%s", h)
	r.headline("Chat turn's local overhead over the model's and tools' own time: %.1f ms without a tool call, %.1f ms with one integration call "+
		"(a DynamoDB Local request under way for %.1f and %.1f ms of it)", over["no_tool_call"].median()/1e6, over["one_integration_call"].median()/1e6,
		over["no_tool_call/ddb"].median()/1e6, over["one_integration_call/ddb"].median()/1e6)
	return nil
}
