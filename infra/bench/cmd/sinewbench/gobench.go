package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// samples are a metric's values over -count runs.
type samples []float64

func (s samples) median() float64 {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

func (s samples) spread() (lo, hi float64) {
	if len(s) == 0 {
		return 0, 0
	}
	return slices.Min(s), slices.Max(s)
}

// benchResults: benchmark name (without the -GOMAXPROCS suffix) → unit → samples.
type benchResults map[string]map[string]samples

func (b benchResults) get(name, unit string) samples { return b[name][unit] }

// goBench is one `go test -bench` invocation.
type goBench struct {
	pkg, bench, benchtime string
	count                 int
	ddb                   bool // needs DynamoDB Local (run under the ddblocal wrapper)
}

func (g goBench) args() []string {
	a := []string{"test", "-run", "^$", "-bench", g.bench, "-benchmem", "-count", strconv.Itoa(g.count)}
	if g.benchtime != "" {
		a = append(a, "-benchtime", g.benchtime)
	}
	return append(a, g.pkg)
}

// command is the shell form of the invocation, for the report.
func (g goBench) command() string {
	return shellJoin(wrapDDB(g.ddb, append([]string{"go"}, g.args()...)))
}

func wrapDDB(ddb bool, argv []string) []string {
	if !ddb {
		return argv
	}
	return append([]string{"go", "run", "./internal/testenv/ddblocal/cmd/ddblocal", "--"}, argv...)
}

func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if strings.ContainsAny(a, " ^$|*()'") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

var suffix = regexp.MustCompile(`-\d+$`)

// run executes the benchmark and parses its lines: name, iterations, then value/unit pairs.
func (g goBench) run(ctx context.Context) (benchResults, error) {
	out, err := runCmd(ctx, wrapDDB(g.ddb, append([]string{"go"}, g.args()...)), nil)
	if err != nil {
		return nil, err
	}
	return parseBench(out), nil
}

func parseBench(out []byte) benchResults {
	res := benchResults{}
	add := func(name string, f []string) {
		if res[name] == nil {
			res[name] = map[string]samples{}
		}
		for i := 1; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			res[name][f[i+1]] = append(res[name][f[i+1]], v)
		}
	}
	// A benchmark that logs to stdout splits its result line: the name, the log lines, then the
	// iterations and metrics on a line of their own; pending carries the name across.
	pending := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.HasPrefix(f[0], "Benchmark") {
			name := suffix.ReplaceAllString(f[0], "")
			if len(f) >= 4 && isInt(f[1]) {
				add(name, f[1:])
				pending = ""
			} else {
				pending = name
			}
			continue
		}
		if pending != "" && isInt(f[0]) && strings.Contains(line, "ns/op") {
			add(pending, f)
			pending = ""
		}
	}
	return res
}

func isInt(s string) bool { _, err := strconv.Atoi(s); return err == nil }

// runCmd runs argv in the module root with env added, returning stdout; stderr goes to ours so a
// long run shows progress, and a failure carries the output's tail.
func runCmd(ctx context.Context, argv []string, env []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		tail := stdout.String()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return nil, fmt.Errorf("%s: %w\n%s", shellJoin(argv), err, tail)
	}
	return stdout.Bytes(), nil
}
