// Package suite reads the official JSONata test suite (test/test-suite of
// https://github.com/jsonata-js/jsonata, described by its TESTSUITE.md).
//
// It gives the cases of every group and the shared datasets, as raw JSON for each evaluator to
// decode its own way.
package suite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Case is one test case.
type Case struct {
	ID        string          // group/file, with #index for a file holding a list of cases
	Expr      string          `json:"expr"`
	ExprFile  string          `json:"expr-file"`
	Data      json.RawMessage `json:"data"`
	Dataset   *string         `json:"dataset"`
	Bindings  json.RawMessage `json:"bindings"`
	Result    json.RawMessage `json:"result"`
	Undefined bool            `json:"undefinedResult"`
	Code      string          `json:"code"`
	Token     *string         `json:"token"`
	Error     *struct {
		Code    string  `json:"code"`
		Token   *string `json:"token"`
		Message *string `json:"message"`
	} `json:"error"`
	Timelimit int `json:"timelimit"`
	Depth     int `json:"depth"`
}

// WantCode is the error code the case expects ("" for none).
func (c *Case) WantCode() string {
	if c.Error != nil {
		return c.Error.Code
	}
	return c.Code
}

// Load reads every case under dir/groups, in the order of their file names.
func Load(dir string) ([]*Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "groups", "*", "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no test suite under %s", dir)
	}
	sort.Strings(files)
	var cases []*Case
	for _, f := range files {
		list, err := loadFile(f)
		if err != nil {
			return nil, err
		}
		cases = append(cases, list...)
	}
	return cases, nil
}

func loadFile(f string) ([]*Case, error) {
	raw, err := os.ReadFile(f)
	if err != nil {
		return nil, err
	}
	id := filepath.Base(filepath.Dir(f)) + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
	var list []*Case
	if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for i, c := range list {
			c.ID = fmt.Sprintf("%s#%d", id, i)
		}
	} else {
		c := &Case{ID: id}
		if err := json.Unmarshal(raw, c); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		list = []*Case{c}
	}
	for _, c := range list {
		if c.ExprFile != "" {
			b, err := os.ReadFile(filepath.Join(filepath.Dir(f), c.ExprFile))
			if err != nil {
				return nil, err
			}
			c.Expr = string(b)
		}
	}
	return list, nil
}

// Datasets reads dir/datasets: name (without .json) to its JSON.
func Datasets(dir string) (map[string][]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "datasets", "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = b
	}
	return out, nil
}

// Input gives the case's input JSON: its own data, or its dataset's; nil when it has none
// (the context item is undefined).
func (c *Case) Input(datasets map[string][]byte) ([]byte, error) {
	if len(c.Data) > 0 {
		return c.Data, nil
	}
	if c.Dataset == nil {
		return nil, nil
	}
	b, ok := datasets[*c.Dataset]
	if !ok {
		return nil, fmt.Errorf("%s: no dataset %s", c.ID, *c.Dataset)
	}
	return b, nil
}
