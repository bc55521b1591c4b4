// Package console is local mode's console in the browser, at /console/ on its HTTP endpoint.
//
// It shows the state machines drawn from their definitions, executions coloured by what happened to
// each state, pending function calls answered through a form, agents and their tools, and a chat.
// Its page is hand-written HTML, CSS and JavaScript embedded in the binary; nothing is fetched from
// anywhere else. Its JSON routes (/console/api/...) take local mode's own tokens, as the API does,
// and read Step Functions through its API; the page calls the HTTP API itself for everything else
// (agents, calls, answers, chat), so a developer sees only their own data.
package console

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/config"
	"sinew/internal/deploy"
	"sinew/internal/fault"
	"sinew/internal/httpapi"
)

//go:embed static
var static embed.FS

// Prefix is where the console is served.
const Prefix = "/console/"

// StepFunctions is the part of the Step Functions API the console reads.
type StepFunctions interface {
	ListStateMachines(ctx context.Context, in *sfn.ListStateMachinesInput, opts ...func(*sfn.Options)) (*sfn.ListStateMachinesOutput, error)
	DescribeStateMachine(ctx context.Context, in *sfn.DescribeStateMachineInput, opts ...func(*sfn.Options)) (*sfn.DescribeStateMachineOutput, error)
	ListExecutions(ctx context.Context, in *sfn.ListExecutionsInput, opts ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error)
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, opts ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
	GetExecutionHistory(ctx context.Context, in *sfn.GetExecutionHistoryInput, opts ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error)
}

// Options configure the console.
type Options struct {
	// API is local mode's HTTP API (behind its JWTs): the console asks it whose an execution is,
	// and serves every path outside /console/ with it.
	API http.Handler
	// StepFunctions is local mode's Step Functions API (SFNClient makes one).
	StepFunctions StepFunctions
	// Claims authenticates a request's bearer token, as the API's front door does.
	Claims httpapi.ClaimsFunc
	// SinewMachines are the names of sinew's own state machines, whose executions belong to a
	// developer (deploy.StateMachines' when nil); any other machine is a user's own, whose
	// executions every local token sees.
	SinewMachines []string
	// ExpressLog gives the log lines (JSON objects, oldest first) of the Express executions of the
	// state machine machineArn named name: local mode's (sfnapi.Service.ExpressLog). The console
	// is local mode's only; on AWS these lines are in the Express machine's CloudWatch log group.
	// Optional: without it an Express call shows its record alone.
	ExpressLog func(machineArn, name string) []json.RawMessage
	Logger     *slog.Logger
}

// SFNClient is a Step Functions client for local mode's endpoint.
func SFNClient(endpoint, region string, creds aws.CredentialsProvider) *sfn.Client {
	return sfn.New(sfn.Options{Region: region, BaseEndpoint: aws.String(endpoint), Credentials: creds})
}

// New gives the HTTP endpoint's handler: the console under /console/, the API everywhere else.
func New(o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	rt := httpapi.New(httpapi.Options{JWTClaim: os.Getenv(config.EnvJWTClaim), Logger: o.Logger, Title: "sinew local console"})
	c := &console{sfn: o.StepFunctions, api: o.API, sinew: map[string]bool{}, expressLog: o.ExpressLog}
	if o.SinewMachines == nil {
		for _, m := range deploy.StateMachines() {
			o.SinewMachines = append(o.SinewMachines, m.Name)
		}
	}
	for _, m := range o.SinewMachines {
		c.sinew[m] = true
	}
	c.register(rt)
	jsonRoutes := httpapi.HTTPHandler(rt.ServeEvent, o.Claims)
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is part of the binary
	}
	page := http.StripPrefix(Prefix, http.FileServer(http.FS(files)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p != strings.TrimSuffix(Prefix, "/") && !strings.HasPrefix(p, Prefix) {
			o.API.ServeHTTP(w, r)
			return
		}
		// Every answer of the console's, its JSON and errors too: a browser can be sent to any.
		secure(w.Header())
		switch {
		case p == strings.TrimSuffix(Prefix, "/"):
			http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		case !fromLoopback(r):
			status, body, _ := httpapi.ErrorResponse(fault.New(fault.Forbidden, "the console answers only on a loopback address (127.0.0.1, localhost or ::1)"))
			writeError(w, status, body)
		case strings.HasPrefix(p, Prefix+"api/"):
			jsonRoutes.ServeHTTP(w, r)
		default:
			w.Header().Set("Cache-Control", "no-cache")
			page.ServeHTTP(w, r)
		}
	})
}

// policy is the console's Content-Security-Policy. The page runs its one script file and loads
// nothing from elsewhere, so text that reached the page as markup (or a javascript: link, or
// eval) would run nothing; Trusted Types make the browser refuse any HTML or script built from
// a string, so a sink added to app.js fails loudly instead of waiting for a payload.
const policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

// secure sets the headers that keep a browser to the policy, from guessing a type other than
// the one sent, and from showing the console in another site's frame or telling it its address.
func secure(h http.Header) {
	h.Set("Content-Security-Policy", policy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
}

// fromLoopback reports whether a request came from this machine and names it by a loopback
// host: a page of another site that a browser reaches through a name resolving to 127.0.0.1
// (DNS rebinding) names its own host and is refused.
func fromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return false
	}
	name := r.Host
	if h, _, err := net.SplitHostPort(r.Host); err == nil {
		name = h
	}
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(name, "[]"))
	return ip != nil && ip.IsLoopback()
}

type console struct {
	sfn        StepFunctions
	api        http.Handler
	sinew      map[string]bool
	expressLog func(machineArn, name string) []json.RawMessage
}
