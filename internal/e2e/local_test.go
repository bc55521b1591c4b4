package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/localaws/sfnapi"
	"sinew/internal/testenv/localmode"
)

const toolCallARN = "arn:aws:states:us-east-1:000000000000:stateMachine:tool_call"

// local is a running local mode.
type local struct{ *localmode.Proc }

// startLocal runs local mode on dir with extra environment (KEY=VALUE) and waits for "ready".
func startLocal(t testing.TB, dir string, env []string) *local {
	t.Helper()
	lp, err := localmode.Start(binPath, dir, []string{"--root", "../.."}, append(os.Environ(), env...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		lp.Kill()
		if t.Failed() {
			t.Logf("local mode's log (last 4 KiB):\n%s", tail(lp.Stderr.String(), 4096))
		}
	})
	return &local{lp}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// logLines is local mode's log lines that mention s (at most 20).
func (p *local) logLines(s string) string {
	var out []string
	for _, l := range strings.Split(p.Stderr.String(), "\n") {
		if strings.Contains(l, s) && len(out) < 20 {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// kill9 kills the process as a crash would.
func (p *local) kill9(t testing.TB) {
	t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
}

// sfnClient is an aws-sdk-go-v2 Step Functions client of local mode. Its HTTP client keeps enough
// idle connections for the load's concurrency.
func (p *local) sfnClient() *sfn.Client {
	return sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(p.Endpoints["stepfunctions"]),
		Credentials: p.Credentials(), HTTPClient: pooledClient()}, sfnapi.NoHostPrefix)
}

func pooledClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 512, 512
	// The bound only guards against a hang: under load an answer may take long, and a client that
	// gave up could not tell whether its answer was taken.
	return &http.Client{Transport: tr, Timeout: 10 * time.Minute}
}

// api is a developer's client of local mode's HTTP API.
type api struct {
	base, token string
	hc          *http.Client
}

// apiFor issues a token for dev with `local token` and answers its client.
func (p *local) apiFor(t testing.TB, dev string) *api {
	t.Helper()
	out, err := exec.Command(binPath, "token", "--dir", p.Dir, dev).Output()
	if err != nil {
		t.Fatalf("local token %s: %v", dev, err)
	}
	return &api{base: p.Endpoints["http"], token: strings.TrimSpace(string(out)), hc: pooledClient()}
}

// do sends a request and answers the status and the decoded JSON body (nil when empty).
func (a *api) do(ctx context.Context, method, path string, body any, hdr ...string) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	var m map[string]any
	if len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, &m); err != nil {
			return resp.StatusCode, nil, fmt.Errorf("%s %s answered %d with %q, not a JSON object", method, path, resp.StatusCode, b)
		}
	}
	return resp.StatusCode, m, nil
}

// startAsync posts a tool call with Prefer: respond-async, which must answer 202, and gives the
// answer: the execution to poll.
func (a *api) startAsync(t testing.TB, body any) map[string]any {
	t.Helper()
	code, m, err := a.do(context.Background(), "POST", "/tool-calls", body, "Prefer", "respond-async")
	if err != nil || code != 202 {
		t.Fatalf("POST /tool-calls (respond-async) = %d %v (%v), want 202", code, m, err)
	}
	return m
}

// must sends a request that must answer want.
func (a *api) must(t testing.TB, method, path string, body any, want int) map[string]any {
	t.Helper()
	code, m, err := a.do(context.Background(), method, path, body)
	if err != nil || code != want {
		t.Fatalf("%s %s = %d %v (%v), want %d", method, path, code, m, err, want)
	}
	return m
}

// toolCallInput is tool_call's input, every key present.
func toolCallInput(dev, agent, tool string, args any) string {
	b, _ := json.Marshal(map[string]any{"developer_id": dev, "agent_id": agent, "task_id": nil, "session_id": nil, "tool": tool, "arguments": args})
	return string(b)
}

// execARN is the ARN of tool_call's execution name.
func execARN(name string) string {
	return strings.Replace(toolCallARN, ":stateMachine:", ":execution:", 1) + ":" + name
}

// waitEnded polls DescribeExecution until the execution is no longer RUNNING; the bound only
// guards against a hang.
func waitEnded(t testing.TB, c *sfn.Client, name string, limit time.Duration) *sfn.DescribeExecutionOutput {
	t.Helper()
	d, err := awaitEnd(c, name, limit)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// awaitEnd is waitEnded for goroutines other than the test's: it answers the error.
func awaitEnd(c *sfn.Client, name string, limit time.Duration) (*sfn.DescribeExecutionOutput, error) {
	deadline := time.Now().Add(limit)
	for {
		d, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(execARN(name))})
		if err == nil && d.Status != types.ExecutionStatusRunning {
			return d, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("execution %s still running after %v (%v)", name, limit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// historyOf lists "<type> <error>" for an execution's events, oldest first.
func historyOf(t testing.TB, c *sfn.Client, name string) []string {
	t.Helper()
	var out []string
	p := sfn.NewGetExecutionHistoryPaginator(c, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(execARN(name)), MaxResults: 1000})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("history of %s: %v", name, err)
		}
		for _, e := range page.Events {
			s := string(e.Type)
			switch {
			case e.TaskFailedEventDetails != nil:
				s += " " + aws.ToString(e.TaskFailedEventDetails.Error)
			case e.StateEnteredEventDetails != nil:
				s += " " + aws.ToString(e.StateEnteredEventDetails.Name)
			}
			out = append(out, s)
		}
	}
	return out
}

// failedSpan is the time from an execution's first TaskFailed event to its last one, and how
// many there were: how long its Tasks kept failing.
func failedSpan(t testing.TB, c *sfn.Client, name string) (time.Duration, int) {
	t.Helper()
	var first, last time.Time
	n := 0
	p := sfn.NewGetExecutionHistoryPaginator(c, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(execARN(name)), MaxResults: 1000})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("history of %s: %v", name, err)
		}
		for _, e := range page.Events {
			if e.Type != types.HistoryEventTypeTaskFailed {
				continue
			}
			ts := aws.ToTime(e.Timestamp)
			if n == 0 {
				first = ts
			}
			last = ts
			n++
		}
	}
	return last.Sub(first), n
}

// failures counts an execution's TaskFailed events by "<state> <error>".
func failures(t testing.TB, c *sfn.Client, name string) map[string]int {
	t.Helper()
	out := map[string]int{}
	state := ""
	p := sfn.NewGetExecutionHistoryPaginator(c, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(execARN(name)), MaxResults: 1000})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("history of %s: %v", name, err)
		}
		for _, e := range page.Events {
			switch {
			case e.StateEnteredEventDetails != nil:
				state = aws.ToString(e.StateEnteredEventDetails.Name)
			case e.TaskFailedEventDetails != nil:
				out[state+" "+aws.ToString(e.TaskFailedEventDetails.Error)]++
			}
		}
	}
	return out
}

// causes lists an execution's TaskFailed events as "<state> <error>: <cause>".
func causes(t testing.TB, c *sfn.Client, name string) []string {
	t.Helper()
	var out []string
	state := ""
	p := sfn.NewGetExecutionHistoryPaginator(c, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(execARN(name)), MaxResults: 1000})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("history of %s: %v", name, err)
		}
		for _, e := range page.Events {
			switch {
			case e.StateEnteredEventDetails != nil:
				state = aws.ToString(e.StateEnteredEventDetails.Name)
			case e.TaskFailedEventDetails != nil:
				out = append(out, state+" "+aws.ToString(e.TaskFailedEventDetails.Error)+": "+aws.ToString(e.TaskFailedEventDetails.Cause))
			}
		}
	}
	return out
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// decodeOutput is an execution's output as a JSON object.
func decodeOutput(t testing.TB, d *sfn.DescribeExecutionOutput) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(aws.ToString(d.Output)), &m); err != nil {
		t.Fatalf("%s: output %q: %v", aws.ToString(d.Name), aws.ToString(d.Output), err)
	}
	return m
}

// quantile of sorted durations, nearest rank.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(q*float64(len(sorted)-1)+0.5)]
}

func summary(lat []time.Duration) string {
	s := slices.Clone(lat)
	slices.Sort(s)
	return fmt.Sprintf("n=%d p50=%v p99=%v max=%v", len(s), quantile(s, 0.5).Round(time.Millisecond),
		quantile(s, 0.99).Round(time.Millisecond), quantile(s, 1).Round(time.Millisecond))
}

// sfnCode is the error code of a Step Functions API error ("" for none).
func sfnCode(err error) string {
	var dne *types.TaskDoesNotExist
	var tto *types.TaskTimedOut
	var inv *types.InvalidToken
	switch {
	case err == nil:
		return ""
	case errors.As(err, &dne):
		return "TaskDoesNotExist"
	case errors.As(err, &tto):
		return "TaskTimedOut"
	case errors.As(err, &inv):
		return "InvalidToken"
	}
	return err.Error()
}
