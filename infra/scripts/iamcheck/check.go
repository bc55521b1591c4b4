package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"sinew/internal/iamrec"
	"sinew/internal/localaws/localnames"
)

type options struct {
	template string
	records  []string
	node     string
	script   string
	// starWildcardOnly evaluates the actions AWS's Service Authorization Reference lists with no
	// resource type (states:SendTask*) against Resource "*" instead of the resource recorded.
	starWildcardOnly bool
}

// Exit codes.
const (
	exitOK          = 0
	exitDenied      = 1
	exitUncheckable = 2
)

func run(w io.Writer, o options) (int, error) {
	tpl, err := templateFile(o.template)
	if err != nil {
		return exitUncheckable, err
	}
	s, err := loadStack(tpl)
	if err != nil {
		return exitUncheckable, err
	}
	pols, err := s.collect()
	if err != nil {
		return exitUncheckable, err
	}
	rs, sources, err := readRecords(o.records)
	if err != nil {
		return exitUncheckable, err
	}
	pl := plan(s, pols, rs)
	pl.sources = append(sources, "template: "+tpl)
	results, err := simulate(o, pols, pl.jobs)
	if err != nil {
		return exitUncheckable, err
	}
	return report(w, pols, pl, results), nil
}

// templateFile is path, or the one *.template.json in directory path (cdk.out: its name is the
// stack's, which the stackName setting may change).
func templateFile(path string) (string, error) {
	missing := fmt.Errorf("no synthesized template at %s: make cdk-test (or make synth) writes it", path)
	fi, err := os.Stat(path)
	if err != nil {
		return "", missing
	}
	if !fi.IsDir() {
		return path, nil
	}
	found, _ := filepath.Glob(filepath.Join(path, "*.template.json"))
	switch len(found) {
	case 0:
		return "", missing
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%s holds %d templates (%s): name one with -template", path, len(found), strings.Join(found, ", "))
}

// readRecords reads every directory that exists; none with a record is an error naming what writes them.
// sources says what was read from where.
func readRecords(dirs []string) (all []iamrec.Request, sources []string, err error) {
	for _, d := range dirs {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			sources = append(sources, "records: "+d+" absent")
			continue
		}
		rs, files, err := iamrec.ReadDir(d)
		if err != nil {
			return nil, nil, err
		}
		sources = append(sources, fmt.Sprintf("records: %s (%d files, %d requests)", d, files, len(rs)))
		all = append(all, rs...)
	}
	if len(all) == 0 {
		return nil, nil, fmt.Errorf("no recorded AWS requests in %s: make unit and make demo record them (SINEW_LOCAL_IAM_RECORD)", strings.Join(dirs, ", "))
	}
	return all, sources, nil
}

// job is one distinct request for simulate.js.
type job struct {
	ID             string         `json:"id"`
	Principal      string         `json:"principal"`
	Action         string         `json:"action"`
	Resource       string         `json:"resource"`
	Account        string         `json:"account"`
	Context        map[string]any `json:"context"`
	Identity       []string       `json:"identity"`
	ResourcePolicy *string        `json:"resource_policy"`
}

// planned is the records sorted into distinct requests to evaluate and those that cannot be.
type planned struct {
	reqs       []iamrec.Request // parallel to jobs: the request as recorded (its key renamed)
	counts     []int
	jobs       []job
	principals map[string]map[string]bool // type -> names, of the evaluated requests
	total      int                        // evaluated requests
	foreign    map[string]int             // principal the stack does not define -> requests
	unnamed    map[string]int             // action -> requests whose resource local mode could not name
	invalid    []string                   // requests no check can evaluate: unattributed, not derived
	sources    []string                   // what was read
}

func plan(s *stack, pols *policies, rs []iamrec.Request) *planned {
	pl := &planned{principals: map[string]map[string]bool{}, foreign: map[string]int{}, unnamed: map[string]int{}}
	byKey := map[string]int{}
	roleOf := map[principal]string{}
	for id, p := range s.roles {
		roleOf[p] = id
	}
	for _, r := range rs {
		switch {
		case r.Underived:
			pl.invalid = append(pl.invalid, fmt.Sprintf("%s by %s %s: an operation the recording does not derive (internal/iamrec.Derive)", r.Operation, r.PrincipalType, r.Principal))
			continue
		case r.PrincipalType == "":
			pl.invalid = append(pl.invalid, fmt.Sprintf("%s %s (%s): no principal (a request outside any invocation or execution)", r.Action, r.Resource, r.Operation))
			continue
		case r.Principal == "" && r.PrincipalType == iamrec.PrincipalStateMachine:
			pl.foreign["state machine of an Express execution (local mode does not name it)"]++
			continue
		case r.Resource == "":
			pl.unnamed[r.Action]++
			continue
		}
		role, known := roleOf[principalOf(r.Principal, r.PrincipalType)]
		if !known && r.PrincipalType != iamrec.PrincipalService {
			pl.foreign[r.PrincipalType+" "+r.Principal]++
			continue
		}
		r = s.renameKey(r)
		key, _ := json.Marshal([]any{r.Principal, r.PrincipalType, r.Action, r.Resource, r.Context})
		if i, ok := byKey[string(key)]; ok {
			pl.counts[i]++
		} else {
			byKey[string(key)] = len(pl.jobs)
			pl.reqs, pl.counts = append(pl.reqs, r), append(pl.counts, 1)
			pl.jobs = append(pl.jobs, newJob(len(pl.jobs), r, pols, pols.identity[role]))
		}
		if pl.principals[r.PrincipalType] == nil {
			pl.principals[r.PrincipalType] = map[string]bool{}
		}
		pl.principals[r.PrincipalType][r.Principal] = true
		pl.total++
	}
	return pl
}

// renameKey gives a recorded KMS key the ARN the check gives the template's key with its alias.
func (s *stack) renameKey(r iamrec.Request) iamrec.Request {
	for _, a := range r.KeyAliases {
		if id, ok := s.keyAlias[a]; ok {
			r.Resource = s.arn[id]
		}
	}
	return r
}

func newJob(i int, r iamrec.Request, pols *policies, identity []string) job {
	j := job{ID: strconv.Itoa(i), Principal: r.Principal, Action: r.Action, Resource: r.Resource, Account: localnames.Account,
		Context: map[string]any{}, Identity: identity}
	if j.Identity == nil {
		j.Identity = []string{}
	}
	for k, v := range r.Context {
		j.Context[k] = v
	}
	if r.PrincipalType != iamrec.PrincipalService {
		j.Principal = principalARN(r.Principal)
		j.Context["aws:PrincipalArn"] = roleARN(r.Principal)
		j.Context["aws:PrincipalAccount"] = localnames.Account
	}
	if name, ok := pols.resource[r.Resource]; ok {
		j.ResourcePolicy = &name
	}
	return j
}

// result is simulate.js's answer for one job.
type result struct {
	ID      string   `json:"id"`
	Result  string   `json:"result"`
	Grants  [][]any  `json:"grants"`
	Explain string   `json:"explain"`
	Errors  []string `json:"errors"`
	Notes   []string `json:"notes"`
}

// simulate runs simulate.js over the jobs.
func simulate(o options, pols *policies, jobs []job) (map[string]result, error) {
	in, err := json.Marshal(map[string]any{"policies": pols.docs, "jobs": jobs, "star_wildcard_only": o.starWildcardOnly})
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.node, o.script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s(make deps installs @cloud-copilot/iam-simulate in infra/node_modules)", o.node, o.script, err, stderr.String())
	}
	results := map[string]result{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("simulate.js answered %q: %w", sc.Text(), err)
		}
		results[r.ID] = r
	}
	if len(results) != len(jobs) {
		return nil, fmt.Errorf("simulate.js answered %d of %d requests", len(results), len(jobs))
	}
	return results, nil
}
