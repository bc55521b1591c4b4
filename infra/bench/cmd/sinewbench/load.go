package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// The local-mode load (make soak): its headline line as the test prints it, the test's own
// figures, and the top of local mode's CPU profile during the load beside the one before the
// work on it (profiles/local-load-before.txt).

var (
	loadHeadline = regexp.MustCompile(`(?m)^- (Local mode load: .*)$`)
	loadFigures  = regexp.MustCompile(`(?m)^\s+load_test\.go:\d+: (.*)$`)
)

// profileBeforeNote is what the profile before the work showed (its file is fixed).
const profileBeforeNote = "What it showed: the process used about half of one core over the load, so the load waited on " +
	"DynamoDB Local and the machine more than on local mode's CPU. Of that CPU, a sixth went to the garbage collector, an " +
	"eighth to the durable store's commits (bbolt: two fdatasyncs each, the freelist and every start's 10.7 KB definition " +
	"written each time, one commit for every Lambda call's journal entry), and syscalls were a sixth, connect among them: " +
	"the SDK kept 10 idle connections per host, so concurrent calls to DynamoDB Local opened and closed their own."

// profileJournalNote is what the profile showed after the durable store became an append-only
// log (one fdatasync per group commit), measured back to back with the commit before it.
const profileJournalNote = "After the durable store became an append-only log (one fdatasync per group commit, a short " +
	"execution's start and end sharing one), measured back to back with the commit before on a heavily shared machine " +
	"(load average 12-16 on 2 cores, so both runs fell far under the quiet figures, 24.4 and 20.7 executions/s): local " +
	"mode's CPU per execution stayed about 10 ms (10.3 after, 9.9 before, within the noise); the durable store's commits " +
	"took 0.71 s of it after (7%, fdatasync's syscall 4.6%), 0.97 s before (10%, bbolt's Commit 7%). The rest: the " +
	"in-process functions' SDK calls to DynamoDB Local a fifth, serving the local APIs' HTTP requests a sixth, the engine " +
	"a tenth, the status-change events 5%. The process used a quarter of one core: the load waits on DynamoDB Local and " +
	"the machine, so what raises it is fewer DynamoDB requests per execution and less CPU in the functions' own path."

func partLoad(ctx context.Context, o options, r *report) error {
	dir, err := os.MkdirTemp("", "sinewbench-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	prof := filepath.Join(dir, "local.pprof")
	env := []string{"SINEW_SOAK=1", "SINEW_CPUPROFILE=" + prof}
	if o.smoke {
		env = []string{"SINEW_LOAD_N=100", "SINEW_LOAD_M=20", "SINEW_CPUPROFILE=" + prof}
	}
	argv := wrapDDB(true, []string{"go", "test", "-count=1", "-timeout", "60m", "-v", "-run", "^TestLoad$", "./internal/e2e/"})
	out, err := runCmd(ctx, argv, env)
	if err != nil {
		return err
	}
	h := loadHeadline.FindSubmatch(out)
	if h == nil {
		return fmt.Errorf("the load test printed no headline line:\n%s", trim(string(out), 3000))
	}
	r.headline("%s", h[1])
	r.printf("load", "1,000 tool_call executions of mixed types (integration, api_call, a third of them answered 503 first, "+
		"system; 200 function calls answered twice at once by concurrent clients, half through SendTaskSuccess and half "+
		"through the HTTP route), 64 starts in flight, through the real local-mode process and an in-memory DynamoDB Local; "+
		"end to end is from the first start to the last execution's end. The ceiling replays the load's own mix of DynamoDB "+
		"requests (the counts local mode's functions sent) against the same DynamoDB Local, 64 in flight, and divides its "+
		"rate by the load's DynamoDB requests per execution.\n\n```\n")
	for _, m := range loadFigures.FindAllSubmatch(out, -1) {
		if !strings.Contains(string(m[1]), "CPU profile") {
			r.printf("load", "%s\n", m[1])
		}
	}
	r.printf("load", "```\n\nCommand:\n\n```\n%s %s\n```\n\n", strings.Join(env[:len(env)-1], " "), shellJoin(argv))
	before, err := os.ReadFile("infra/bench/profiles/local-load-before.txt")
	if err == nil {
		r.printf("load", "Top of local mode's CPU profile during the load before the work on it (`go tool pprof -top`):\n\n```\n%s```\n\n", before)
		r.printf("load", "%s\n\n", profileBeforeNote)
	}
	top, err := profileTop(ctx, prof)
	if err != nil {
		return err
	}
	r.printf("load", "%s\n\n", profileJournalNote)
	r.printf("load", "Top of local mode's CPU profile during this run's load:\n\n```\n%s```\n", top)
	return nil
}

// profileTop is the top of a CPU profile of ./infra/local (the executable go run keeps cached,
// as the load test runs it).
func profileTop(ctx context.Context, prof string) (string, error) {
	bin, err := exec.CommandContext(ctx, "go", "run", "-exec", "echo", "./infra/local").Output()
	if err != nil {
		return "", fmt.Errorf("finding ./infra/local's executable: %w", err)
	}
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=25", strings.TrimSpace(string(bin)), prof).Output()
	if err != nil {
		return "", fmt.Errorf("go tool pprof %s: %w", prof, err)
	}
	return string(out), nil
}
