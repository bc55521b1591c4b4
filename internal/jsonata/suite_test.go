package jsonata

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"sinew/internal/jsonata/suite"
)

const suiteDir = "testdata/jsonata-test-suite"

func loadSuite(t testing.TB) []*suite.Case {
	t.Helper()
	cases, err := suite.Load(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

type suiteData struct {
	raw      map[string][]byte
	datasets map[string]any
}

func loadDatasets(t testing.TB) *suiteData {
	raw, err := suite.Datasets(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	d := &suiteData{raw: raw, datasets: map[string]any{}}
	for name, b := range raw {
		v, err := ParseJSON(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d.datasets[name] = v
	}
	return d
}

func (d *suiteData) input(c *suite.Case) (any, error) {
	if len(c.Data) > 0 {
		return ParseJSON(c.Data)
	}
	if _, err := c.Input(d.raw); err != nil || c.Dataset == nil {
		return nil, err
	}
	return d.datasets[*c.Dataset], nil
}

// run evaluates a case and gives "" when it passes, else what went wrong.
func (d *suiteData) run(c *suite.Case) string {
	wantCode := c.WantCode()
	expr, err := Compile(c.Expr)
	if err != nil {
		return checkError(c, wantCode, err)
	}
	in, err := d.input(c)
	if err != nil {
		return err.Error()
	}
	opts := Options{Timeout: 10 * time.Second}
	if c.Timelimit > 0 {
		opts.Timeout = time.Duration(c.Timelimit) * time.Millisecond
	}
	if c.Depth > 0 {
		opts.MaxDepth = c.Depth
	}
	if len(c.Bindings) > 0 {
		b, err := ParseJSON(c.Bindings)
		if err != nil {
			return err.Error()
		}
		if o, ok := b.(*Object); ok {
			opts.Bindings = map[string]any{}
			for _, k := range o.Keys() {
				opts.Bindings[k] = o.vals[k]
			}
		}
	}
	if in == nil {
		in = undefinedInput{}
	}
	v, defined, err := expr.evalAny(context.Background(), in, opts)
	if err != nil {
		if wantCode != "" {
			return checkError(c, wantCode, err)
		}
		return "error " + err.Error()
	}
	switch {
	case c.Undefined:
		if defined {
			return "got " + show(v) + ", want undefined"
		}
	case len(c.Result) > 0:
		want, err := ParseJSON(c.Result)
		if err != nil {
			return err.Error()
		}
		if !defined || !deepEqual(normalize(v), want) {
			if !defined {
				return "got undefined, want " + string(c.Result)
			}
			return "got " + show(v) + ", want " + string(c.Result)
		}
	case wantCode != "":
		return "got " + show(v) + ", want error " + wantCode
	}
	return ""
}

// normalize gives a result as JSON would carry it (functions as "", sequences as arrays).
func normalize(v any) any {
	s, err := stringifyExact(v)
	if err != nil {
		return v
	}
	n, err := ParseJSON([]byte(s))
	if err != nil {
		return v
	}
	return n
}

func show(v any) string {
	s, err := stringifyExact(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return s
}

func checkError(c *suite.Case, want string, err error) string {
	e, ok := err.(*Error)
	if !ok {
		return "error " + err.Error()
	}
	if want == "" {
		return "error " + e.Error()
	}
	if e.Code != want {
		return "error " + e.Error() + ", want " + want
	}
	token := c.Token
	if c.Error != nil && c.Error.Token != nil {
		token = c.Error.Token
	}
	if token != nil && e.Token != *token {
		return fmt.Sprintf("error token %q, want %q", e.Token, *token)
	}
	if c.Error != nil && c.Error.Message != nil && e.Message() != *c.Error.Message {
		return fmt.Sprintf("error message %q, want %q", e.Message(), *c.Error.Message)
	}
	return ""
}

// readExceptions reads testdata/suite-exceptions.txt: "<case id>: <reason>" a line.
func readExceptions(t testing.TB) map[string]string {
	f, err := os.Open("testdata/suite-exceptions.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, _ := strings.Cut(line, ": ")
		out[id] = reason
	}
	return out
}

// TestSuite runs the official JSONata 2.0.6 test suite and prints its count. A case fails the
// test unless it passes or is listed, with its reason, in testdata/suite-exceptions.txt; a listed
// case that passes fails it too, so the list stays exact.
func TestSuite(t *testing.T) {
	cases := loadSuite(t)
	data := loadDatasets(t)
	exceptions := readExceptions(t)
	passed := 0
	for _, c := range cases {
		problem := data.run(c)
		_, listed := exceptions[c.ID]
		switch {
		case problem == "" && listed:
			t.Errorf("%s passes but is listed as an exception", c.ID)
		case problem == "":
			passed++
		case !listed:
			t.Errorf("%s: %s\n\texpr: %s", c.ID, problem, c.Expr)
		}
	}
	t.Logf("jsonata-suite count: %d of %d cases pass (%.1f%%), %d listed exceptions", passed, len(cases), 100*float64(passed)/float64(len(cases)), len(exceptions))
}
