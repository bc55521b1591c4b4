package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"sinew/internal/testenv/smtpd"
)

// options are what a run needs from its caller.
type options struct {
	root string    // the module root: where go.mod, infra/local and statemachines/ are
	out  io.Writer // where the demo prints its steps and report
}

// outcome is what a run leaves for its caller (the test checks it).
type outcome struct {
	rows    []row
	steps   []timing
	mails   []smtpd.Message
	secrets []string // the setup secrets the run made; never printed
	output  string   // everything the demo printed
	// localLog is local mode's log, read before its directory is removed.
	localLog string
}

// row is one call in the report.
type row struct {
	call, typ, path, result string
	took                    time.Duration
}

// timing is one step's time in the report.
type timing struct {
	name string
	took time.Duration
}

// stepError names the step that failed.
type stepError struct {
	n, of int
	name  string
	err   error
}

func (e *stepError) Error() string {
	return fmt.Sprintf("step %d/%d (%s): %v", e.n, e.of, e.name, e.err)
}

func (e *stepError) Unwrap() error { return e.err }

// step is one step of the scenario: it returns a one-line summary.
type step struct {
	name string
	run  func(ctx context.Context) (string, error)
}

type demo struct {
	options
	clock stepClock
	// tty is whether out is a terminal: a wait's progress line is then rewritten in place.
	tty bool
	// progressEvery is how often a wait's progress is printed when out is not a terminal, and
	// liveEvery how often it is rewritten when it is.
	progressEvery, liveEvery time.Duration

	mu      sync.Mutex   // guards printing (progress lines come from other goroutines)
	printed bytes.Buffer // a copy of the output, searched for secrets
	live    string       // the progress line shown in place, not yet ended by a newline

	dir       string // the run's temporary directory, removed at the end
	bin       string
	local     *exec.Cmd
	exited    chan error
	localLog  string
	endpoints map[string]string
	token     string
	// awsEnv is what `local env` exports: the AWS endpoint, local mode's credentials and region.
	awsEnv  map[string]string
	weather *http.Server
	// weatherHits counts the requests the weather API served with the right key.
	weatherHits atomic.Int64
	mail        *smtpd.Server
	mailCA      string       // the SMTP server's certificate file, for SINEW_EMAIL_CA_FILE
	answers     bytes.Buffer // every HTTP API answer, searched for secrets
	nAnswers    int

	// the scenario's state
	svcAddr         string
	clip            []byte
	secrets         map[string]string // what each secret is for → its value
	agentID, sessID string
	executions      []string // on tool_call: Step Functions keeps their histories, which the secrets check reads
	expressCalls    int      // calls that ran on tool_call_express: no history; their records and logs are read
	rows            []row
	steps           []timing
}

func run(ctx context.Context, o options) (*outcome, error) {
	d := &demo{options: o, tty: isTerminal(o.out), progressEvery: 10 * time.Second, liveEvery: time.Second, secrets: map[string]string{}}
	err := d.runSteps(ctx, d.scenario())
	if err == nil {
		d.report()
	}
	out := &outcome{rows: d.rows, steps: d.steps}
	if d.mail != nil {
		out.mails = d.mail.Messages()
	}
	for _, v := range d.secrets {
		out.secrets = append(out.secrets, v)
	}
	d.cleanup()
	if b, rerr := os.ReadFile(d.localLog); rerr == nil {
		out.localLog = string(b)
		if err != nil {
			// The log goes with the run's directory: its end is shown now.
			d.printf("\nthe end of local mode's log:\n%s\n", tail(d.localLog, 15))
		}
	}
	d.mu.Lock()
	out.output = d.printed.String()
	d.mu.Unlock()
	if d.dir != "" {
		_ = os.RemoveAll(d.dir)
	}
	return out, err
}

// runSteps runs the steps in order, printing each with its time, and stops at the first failure.
func (d *demo) runSteps(ctx context.Context, steps []step) error {
	for i, s := range steps {
		d.printf("[%5.1fs] ▶ %d/%d %s\n", d.elapsed(), i+1, len(steps), s.name)
		d.clock.start()
		summary, err := s.run(ctx)
		took := d.clock.stop()
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil {
			d.printf("[%5.1fs] ✗ %d/%d failed after %s\n", d.elapsed(), i+1, len(steps), took.Round(time.Millisecond))
			return &stepError{n: i + 1, of: len(steps), name: s.name, err: err}
		}
		d.steps = append(d.steps, timing{s.name, took})
		d.printf("[%5.1fs] ✓ %s (%s)\n", d.elapsed(), summary, took.Round(time.Millisecond))
	}
	return nil
}

func (d *demo) elapsed() float64 { return d.clock.elapsed().Seconds() }

func (d *demo) printf(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.endLive()
	s := fmt.Sprintf(format, args...)
	d.printed.WriteString(s)
	_, _ = io.WriteString(d.out, s)
}

// detail prints an indented line under the current step.
func (d *demo) detail(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	d.printf("          %s\n", strings.ReplaceAll(s, "\n", "\n          "))
}

// api calls the local HTTP API and decodes its JSON answer, checking the status.
func (d *demo) api(ctx context.Context, method, path string, body any, want int, alsoOK ...int) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.endpoints["http"]+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	d.answers.Write(raw)
	d.answers.WriteByte('\n')
	d.nAnswers++
	if resp.StatusCode != want && !slices.Contains(alsoOK, resp.StatusCode) {
		return nil, fmt.Errorf("%s %s answered %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	out := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("%s %s: the answer is not a JSON object: %s", method, path, raw)
		}
	}
	return out, nil
}

// waitStatus polls GET /executions/{id} until it reaches want (or a final status that is not want).
func (d *demo) waitStatus(ctx context.Context, id, want string) (map[string]any, error) {
	deadline := time.Now().Add(90 * time.Second)
	status := "not recorded yet"
	var smu sync.Mutex
	stop := d.progress("waiting for execution "+id+" to be "+want, func() string {
		smu.Lock()
		defer smu.Unlock()
		return "it is " + status
	})
	defer stop()
	for {
		x, err := d.api(ctx, "GET", "/executions/"+id, nil, 200)
		if err != nil {
			// The execution is recorded by its first state, a moment after POST /tool-calls
			// answers 202.
			if strings.Contains(err.Error(), "answered 404") && time.Now().Before(deadline) {
				if err := sleep(ctx, 100*time.Millisecond); err != nil {
					return nil, err
				}
				continue
			}
			return nil, err
		}
		st, _ := x["status"].(string)
		smu.Lock()
		status = st
		smu.Unlock()
		if st == want {
			return x, nil
		}
		switch st {
		case "succeeded", "failed", "timed_out", "cancelled":
			return nil, fmt.Errorf("execution %s ended %s, want %s: %s", id, st, want, summarize(x["error"], 300))
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("execution %s still %s after 90 s, want %s", id, st, want)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func (d *demo) report() {
	d.printf("\nsinew demo: every call went through the local HTTP API, Step Functions and the Lambdas\n\n")
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "CALL\tTYPE\tTIME\tPATH\tRESULT")
	for _, r := range d.rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.call, r.typ, r.took.Round(time.Millisecond), r.path, r.result)
	}
	w.Flush()
	fmt.Fprintf(&b, "\n%10s  %s\n", "TIME", "STEP")
	var total time.Duration
	for _, s := range d.steps {
		total += s.took
		fmt.Fprintf(&b, "%10s  %s\n", s.took, s.name)
	}
	// The one total the demo gives: the [clock] of its lines counts the same step times.
	fmt.Fprintf(&b, "%10s  total: all steps (the sum of the times above)\n", total)
	d.printf("%s", b.String())
	d.printf(`
Try next (the demo has stopped its local mode; start one with make local, or go run ./infra/local):
  eval "$(go run ./infra/local env)"    (the AWS endpoint and local mode's credentials: its AWS APIs answer only signed requests)
  TOKEN=$(go run ./infra/local token my-developer)
  curl -H "Authorization: Bearer $TOKEN" <http endpoint>/openapi.json
  curl -H "Authorization: Bearer $TOKEN" "<http endpoint>/calls?status=pending"
  <http endpoint>/console/#token=$TOKEN in a browser: the console (graphs, executions, pending calls, agents, chat)
  aws stepfunctions list-executions --endpoint-url "$AWS_ENDPOINT_URL" --state-machine-arn arn:aws:states:us-east-1:000000000000:stateMachine:tool_call
  SINEW_MODEL=scripted:infra/demo/script.json go run ./infra/local    (the demo's scripted model)
`)
}

func (d *demo) cleanup() {
	if d.local != nil && d.local.Process != nil {
		// The whole process group: local mode and the DynamoDB Local JVM it started.
		_ = syscall.Kill(-d.local.Process.Pid, syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-d.local.Process.Pid, syscall.SIGKILL)
			<-d.exited
		}
	}
	if d.weather != nil {
		_ = d.weather.Close()
	}
	if d.mail != nil {
		d.mail.Close()
	}
}

// summarize is v as compact JSON, cut to at most n characters.
func summarize(v any, n int) string {
	if v == nil {
		return "null"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<redacted>" reads as itself
	_ = enc.Encode(v)
	s := strings.TrimSuffix(b.String(), "\n")
	if len(s) > n {
		s = s[:n-3] + "..."
	}
	return s
}

func shellQuote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " {}\"'$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
