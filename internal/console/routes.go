package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
)

func writeError(w http.ResponseWriter, status int, body httpapi.ErrorBody) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (c *console) register(rt *httpapi.Router) {
	for _, r := range []httpapi.Route{
		{Method: http.MethodGet, Path: "/console/api/machines", Handler: c.listMachines},
		{Method: http.MethodGet, Path: "/console/api/machines/{name}", Handler: c.getMachine},
		{Method: http.MethodGet, Path: "/console/api/executions", Handler: c.listExecutions},
		{Method: http.MethodGet, Path: "/console/api/executions/{machine}/{name}", Handler: c.getExecution},
	} {
		rt.Handle(r)
	}
}

// Machine is a state machine in the list.
type Machine struct {
	Name    string    `json:"name"`
	ARN     string    `json:"arn"`
	Type    string    `json:"type"`
	Sinew   bool      `json:"sinew"` // one of sinew's own, whose executions are a developer's
	Created time.Time `json:"created"`
}

// taskMachinePrefix begins the names of Julep tasks' machines (package julep/taskmachine): sinew's
// own, whose executions are the developer's who owns the task.
const taskMachinePrefix = "task-"

func isTaskMachine(name string) bool { return strings.HasPrefix(name, taskMachinePrefix) }

// machines lists every state machine.
func (c *console) machines(ctx context.Context) ([]Machine, error) {
	out := []Machine{}
	var next *string
	for {
		page, err := c.sfn.ListStateMachines(ctx, &sfn.ListStateMachinesInput{NextToken: next, MaxResults: 1000})
		if err != nil {
			return nil, sfnErr(err)
		}
		for _, m := range page.StateMachines {
			out = append(out, Machine{Name: aws.ToString(m.Name), ARN: aws.ToString(m.StateMachineArn), Type: string(m.Type),
				Sinew: c.sinew[aws.ToString(m.Name)] || isTaskMachine(aws.ToString(m.Name)), Created: aws.ToTime(m.CreationDate)})
		}
		if next = page.NextToken; next == nil {
			break
		}
	}
	slices.SortFunc(out, func(a, b Machine) int {
		if a.Sinew != b.Sinew { // sinew's first
			if a.Sinew {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

func (c *console) machine(ctx context.Context, name string) (Machine, error) {
	ms, err := c.machines(ctx)
	if err != nil {
		return Machine{}, err
	}
	for _, m := range ms {
		if m.Name == name {
			return m, nil
		}
	}
	return Machine{}, fault.New(fault.NotFound, "no state machine named %q", name)
}

func (c *console) listMachines(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	if err := onlyQuery(r); err != nil {
		return nil, err
	}
	ms, err := c.machines(ctx)
	if err != nil {
		return nil, err
	}
	return httpapi.OK(map[string]any{"items": ms}), nil
}

// MachineView is a state machine with its definition and its graph.
type MachineView struct {
	Machine
	Definition json.RawMessage `json:"definition"`
	Graph      *Graph          `json:"graph"`
}

func (c *console) machineView(ctx context.Context, name string) (*MachineView, error) {
	m, err := c.machine(ctx, name)
	if err != nil {
		return nil, err
	}
	d, err := c.sfn.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(m.ARN)})
	if err != nil {
		return nil, sfnErr(err)
	}
	def := []byte(aws.ToString(d.Definition))
	g, err := Layout(def)
	if err != nil {
		return nil, fault.Wrap(fault.Unprocessable, err, "state machine %q cannot be drawn: %v", name, err)
	}
	if !json.Valid(def) {
		def, _ = json.Marshal(string(def))
	}
	return &MachineView{Machine: m, Definition: def, Graph: g}, nil
}

func (c *console) getMachine(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	if err := onlyQuery(r); err != nil {
		return nil, err
	}
	v, err := c.machineView(ctx, r.Param("name"))
	if err != nil {
		return nil, err
	}
	return httpapi.OK(v), nil
}

// onlyQuery refuses query parameters a route does not take, by name.
func onlyQuery(r *httpapi.Request, allowed ...string) error {
	for k := range r.Query() {
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return fault.Invalid(k, "unknown query parameter %q; this route takes none", k)
			}
			return fault.Invalid(k, "unknown query parameter %q; allowed: %s", k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// sfnErr turns a Step Functions error into sinew's: an unknown machine or execution is NotFound;
// anything else means local mode's Step Functions endpoint failed, which a retry may fix.
func sfnErr(err error) error {
	var nf1 *types.StateMachineDoesNotExist
	var nf2 *types.ExecutionDoesNotExist
	var bad *types.InvalidArn
	if errors.As(err, &nf1) || errors.As(err, &nf2) || errors.As(err, &bad) {
		return fault.Wrap(fault.NotFound, err, "no such state machine or execution")
	}
	return fault.Wrap(fault.Transient, err, "local mode's Step Functions endpoint failed: %v", err)
}

// askAPI sends one request to the HTTP API as the caller (their Authorization header) and gives
// the status and body of its answer.
func (c *console) askAPI(ctx context.Context, r *httpapi.Request, path string) (int, []byte) {
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	req.RemoteAddr = "127.0.0.1:0"
	req.Header.Set("Authorization", r.Header("authorization"))
	rec := httptest.NewRecorder()
	c.api.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// relay answers with the API's own answer (an error's status and body), so a console route fails
// exactly as the API route it relies on does.
func relay(status int, body []byte) *httpapi.Response {
	return &httpapi.Response{Status: status, Body: json.RawMessage(body)}
}

// parseLimit reads ?limit=, 1 to httpapi.MaxLimit, httpapi.DefaultLimit when absent.
func parseLimit(r *httpapi.Request) (int, error) {
	s := r.Query().Get("limit")
	if s == "" {
		return 50, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > httpapi.MaxLimit {
		return 0, fault.Invalid("limit", "limit must be a whole number from 1 to %d", httpapi.MaxLimit)
	}
	return n, nil
}

// executionArn is the ARN of a machine's execution of the given name.
func executionArn(machineArn, name string) string {
	return strings.Replace(machineArn, ":stateMachine:", ":execution:", 1) + ":" + name
}
