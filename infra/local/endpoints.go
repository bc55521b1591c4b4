package main

// The endpoints local mode serves: listening, the handlers behind each port, and where they are
// written for clients.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"sinew/internal/console"
	"sinew/internal/httpapi"
	"sinew/internal/localaws/awsauth"
	"sinew/internal/localaws/awsrouter"
	"sinew/internal/localaws/browserguard"
	"sinew/internal/localaws/jwtlocal"
	"sinew/internal/localaws/lambdaapi"
	"sinew/internal/localaws/quota"
	"sinew/internal/store"
)

// shutdown stops the servers and the Lambda service, giving requests in flight 10 s.
func shutdown(running []*http.Server, lambdaSvc *lambdaapi.Service) {
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range running {
		_ = srv.Shutdown(sctx)
	}
	_ = lambdaSvc.Close(sctx)
}

// announce writes the endpoints to dir's endpoints.json and prints them.
func announce(dir, dynamoDB string, url func(string) string) error {
	eps := map[string]string{"dynamodb": dynamoDB, "pid": strconv.Itoa(os.Getpid())}
	for _, n := range endpointNames {
		eps[n] = url(n)
	}
	if err := writeEndpoints(dir, eps); err != nil {
		return err
	}
	printEndpoints(os.Stdout, eps, dir)
	return nil
}

// listen opens each endpoint's listener on 127.0.0.1, at its --<name>-port or a free port; on
// an error, the listeners opened so far come back with it, for the caller to close. A port in use
// is one line saying which flag moves it.
func listen(o options) (map[string]net.Listener, error) {
	listeners := map[string]net.Listener{}
	for _, n := range endpointNames {
		port := *o.ports[n]
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if errors.Is(err, syscall.EADDRINUSE) {
			return listeners, fmt.Errorf("port %d (the %s endpoint) is in use, perhaps by another local mode: stop it, or choose another port with --%s-port N (0 picks a free one)", port, n, n)
		}
		if err != nil {
			return listeners, fmt.Errorf("listen for %s: %w", n, err)
		}
		listeners[n] = l
	}
	return listeners, nil
}

// awsServices are the AWS APIs local mode serves, DynamoDB Local by its endpoint.
type awsServices struct {
	sfn, lambda, events, kms http.Handler
	dynamoDB                 string
	expressLog               func(machineArn, name string) []json.RawMessage // the console's Express log lines
}

// endpointHandlers is the handler of each endpoint: each AWS API on its own and all of them on
// the one AWS endpoint, routed by signing name, and the HTTP API behind the console; guarded adds
// the checks of requests from outside.
func endpointHandlers(svc awsServices, fns *functions, signer *jwtlocal.Signer, sfnURL string, creds awsauth.Credentials, log *slog.Logger) (map[string]http.Handler, error) {
	ddbProxy, err := proxyTo(svc.dynamoDB, fns.quota)
	if err != nil {
		return nil, err
	}
	all := awsrouter.New(map[string]http.Handler{awsrouter.StepFunctions: svc.sfn, awsrouter.Lambda: svc.lambda,
		awsrouter.EventBridge: svc.events, awsrouter.KMS: svc.kms, awsrouter.DynamoDB: ddbProxy})
	rt := httpapi.HTTPHandler(func(ctx context.Context, ev httpapiEvent) (httpapiResponse, error) {
		return serveAPI(ctx, fns, ev)
	}, signer.Claims)
	return map[string]http.Handler{"stepfunctions": svc.sfn, "lambda": svc.lambda, "events": svc.events, "kms": svc.kms, "aws": all,
		"http": console.New(console.Options{API: rt, StepFunctions: console.SFNClient(sfnURL, region, creds.Provider()), Claims: signer.Claims,
			ExpressLog: svc.expressLog, Logger: log})}, nil
}

// endpointServices are the signing names each AWS endpoint accepts: a request signed for another
// service is refused there, as AWS refuses it at that service's endpoint.
var endpointServices = map[string][]string{
	"aws":           {awsrouter.StepFunctions, awsrouter.Lambda, awsrouter.EventBridge, awsrouter.KMS, awsrouter.DynamoDB},
	"stepfunctions": {awsrouter.StepFunctions},
	"lambda":        {awsrouter.Lambda},
	"events":        {awsrouter.EventBridge},
	"kms":           {awsrouter.KMS},
}

// guarded wraps each endpoint's handler in the checks a request from outside the process passes:
// every endpoint refuses what a web browser sends on a page's behalf (browserguard), and the AWS
// endpoints accept only requests signed with creds (awsauth), as IAM would in an account.
func guarded(handlers map[string]http.Handler, creds awsauth.Credentials) map[string]http.Handler {
	out := make(map[string]http.Handler, len(handlers))
	for n, h := range handlers {
		if svcs, ok := endpointServices[n]; ok {
			h = awsauth.New(creds, awsauth.Options{Region: region, Services: svcs}).Wrap(h)
		}
		out[n] = browserguard.Wrap(h)
	}
	return out
}

// proxyTo forwards requests to endpoint (DynamoDB Local), unchanged: DynamoDB Local does not
// check the signature, whose Host the proxy would otherwise have to keep. With quotas, each
// partition's throughput is q's.
func proxyTo(endpoint string, q *quota.Limits) (http.Handler, error) {
	u, err := neturl.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("the DynamoDB endpoint %q: %w", endpoint, err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	if q != nil {
		p.Transport = q.Transport(store.AttrPK, nil)
	}
	return p, nil
}

// serveEndpoints serves each endpoint's handler on its listener under httpapi's limits (time for
// headers, body and answer, idle time, connections at once); errc hears a server that fails. A
// synchronous Lambda Invoke may take a function's whole timeout, so the endpoints that serve it
// give an answer that long.
func serveEndpoints(servers map[string]http.Handler, listeners map[string]net.Listener) (running []*http.Server, errc chan error) {
	errc = make(chan error, len(servers))
	for n, h := range servers {
		lim := httpapi.DefaultLimits
		if n == "lambda" || n == "aws" {
			lim.WriteTimeout = maxFunctionTimeout + time.Minute
		}
		srv := httpapi.NewServer(h, lim)
		running = append(running, srv)
		go func() {
			if err := srv.Serve(httpapi.LimitListener(listeners[n], lim)); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("%s endpoint: %w", n, err)
			}
		}()
	}
	return running, errc
}

func writeEndpoints(dir string, eps map[string]string) error {
	data, err := json.MarshalIndent(eps, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, ".endpoints.json.tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "endpoints.json"))
}

func printEndpoints(w *os.File, eps map[string]string, dir string) {
	fmt.Fprintf(w, "sinew local mode is up (data in %s)\n", dir)
	for _, n := range []string{"aws", "stepfunctions", "lambda", "http", "events", "kms"} {
		fmt.Fprintf(w, "  %-14s %s\n", n, eps[n])
	}
	// DynamoDB Local's own port checks no signature, so it is not offered: DynamoDB answers on
	// the aws endpoint like every other AWS API.
	fmt.Fprintf(w, "  %-14s %s (on the aws endpoint)\n", "dynamodb", eps["aws"])
	fmt.Fprintf(w, "  %-14s %s%s (in a browser on this machine)\n", "console", eps["http"], console.Prefix)
	fmt.Fprintln(w, "Point the AWS SDKs and the AWS CLI at it (every AWS API answers on the one endpoint, to requests signed with this directory's credentials):")
	fmt.Fprintf(w, "  eval \"$(go run ./infra/local env --dir %s)\"\n", dir)
	fmt.Fprintf(w, "export AWS_ENDPOINT_URL=%s\n", eps["aws"])
	// AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE> are honoured from AWS CLI 1.29 and 2.13 and
	// the SDKs of 2023 on; an older CLI (Debian's awscli 2.9) needs --endpoint-url on each command.
	fmt.Fprintf(w, "(An AWS CLI older than 1.29 or 2.13 ignores AWS_ENDPOINT_URL: pass --endpoint-url %s.)\n", eps["aws"])
	fmt.Fprintln(w, "A token for the HTTP API: go run ./infra/local token DEVELOPER_ID")
	fmt.Fprintln(w, "ready")
}
