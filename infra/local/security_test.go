package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"sinew/internal/localaws/sfnapi"
	"sinew/internal/testenv/chromium"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/testenv/localmode"
)

// victim is the developer whose data the attacks go after.
const victim = "dev-victim"

// forgedAPIEvent is an API Gateway event for the api function whose JWT claims name victim: what
// API Gateway builds only after it has checked the victim's token.
func forgedAPIEvent(method, path, body string) []byte {
	ev, _ := json.Marshal(map[string]any{
		"version": "2.0", "routeKey": "$default", "rawPath": path,
		"headers": map[string]string{"content-type": "application/json"},
		"requestContext": map[string]any{"http": map[string]any{"method": method, "path": path},
			"authorizer": map[string]any{"jwt": map[string]any{"claims": map[string]any{"sub": victim}}}},
		"body": body,
	})
	return ev
}

// startOwnDynamoDB runs local mode with a DynamoDB Local of its own (not the tests' shared one),
// as a user's local mode runs.
func startOwnDynamoDB(t *testing.T) *proc {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, ddblocal.EnvEndpoint+"=") {
			env = append(env, kv)
		}
	}
	lp, err := localmode.Start(binPath, t.TempDir(), []string{"--test-functions", "--root", "../..", "--in-memory"}, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lp.Kill)
	return &proc{lp}
}

// attacker is how a request is (not) signed.
type attacker struct {
	name  string
	creds aws.CredentialsProvider
	codes []string // the AWS error codes it may get
}

func attackers(p *proc) []attacker {
	return []attacker{
		{"unsigned", aws.AnonymousCredentials{}, []string{"MissingAuthenticationTokenException"}},
		{"mis-signed", credentials.NewStaticCredentialsProvider(p.Creds.AccessKeyID, "not-the-secret", ""), []string{"InvalidSignatureException"}},
		{"another key", credentials.NewStaticCredentialsProvider("AKIAGUESSEDGUESSED00", "x", ""), []string{"UnrecognizedClientException"}},
	}
}

// TestAWSEndpointsRefuseWhoCannotSign: the attacks a process on the machine could make on the AWS
// endpoints, each unsigned, signed with a wrong secret and with a key local mode did not make,
// through the AWS SDK for Go, on each service's endpoint and on the one AWS endpoint. Each is
// refused with the error AWS gives, and the victim's data is neither read nor written. The
// operator's credentials still work (the last check), so the refusals are the signature's.
func TestAWSEndpointsRefuseWhoCannotSign(t *testing.T) {
	p := startOwnDynamoDB(t)
	victimAPI := newVictim(t, p)
	ctx := context.Background()
	toolCall := "arn:aws:states:us-east-1:000000000000:stateMachine:tool_call"
	for _, a := range attackers(p) {
		for _, ep := range []string{"aws", "own"} {
			at := func(own string) string {
				if ep == "aws" {
					return p.Endpoints["aws"]
				}
				return p.Endpoints[own]
			}
			lc := lambda.New(lambda.Options{Region: "us-east-1", BaseEndpoint: aws.String(at("lambda")), Credentials: a.creds, RetryMaxAttempts: 1})
			sc := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(at("stepfunctions")), Credentials: a.creds, RetryMaxAttempts: 1}, sfnapi.NoHostPrefix)
			kc := kms.New(kms.Options{Region: "us-east-1", BaseEndpoint: aws.String(at("kms")), Credentials: a.creds, RetryMaxAttempts: 1})
			attacks := map[string]func() error{
				"1 invoke api with forged claims": func() error {
					_, err := lc.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("api"), Payload: forgedAPIEvent("GET", "/secrets", "")})
					return err
				},
				"3 decrypt a data key": func() error {
					_, err := kc.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: []byte("any-blob")})
					return err
				},
				"4 answer another's call": func() error {
					_, err := sc.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String("a-token-from-the-table"), Output: aws.String(`{}`)})
					return err
				},
				"5 run another's tool": func() error {
					_, err := sc.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(toolCall),
						Input: aws.String(`{"developer_id":"` + victim + `","agent_id":"a","tool":"t","arguments":{}}`)})
					return err
				},
				"6 list another's executions": func() error {
					_, err := sc.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(toolCall)})
					return err
				},
				"6 read another's history": func() error {
					_, err := sc.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(strings.Replace(toolCall, "stateMachine", "execution", 1) + ":x")})
					return err
				},
			}
			if ep == "aws" {
				dc := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(p.Endpoints["aws"]), Credentials: a.creds, RetryMaxAttempts: 1})
				attacks["3 scan the table"] = func() error {
					_, err := dc.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(tableName)})
					return err
				}
			}
			for name, attack := range attacks {
				t.Run(a.name+"/"+ep+"/"+name, func(t *testing.T) { wantRefused(t, attack(), a.codes) })
			}
		}
	}
	checkVictimUntouched(t, victimAPI)

	// DynamoDB Local's own port: local mode's table lives under its secret key id, so a caller
	// that guesses the usual local key sees no table at all.
	guess := ddblocal.NewClient(p.Endpoints["dynamodb"])
	tables, err := guess.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil || len(tables.TableNames) != 0 {
		t.Errorf("DynamoDB Local's port with the key \"local\": tables %v (%v); want none", tables, err)
	}
	// The operator's own credentials reach the same data.
	own := ddblocal.NewClientWith(p.Endpoints["aws"], p.Credentials())
	if out, err := own.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(tableName), Limit: aws.Int32(1)}); err != nil || out.Count == 0 {
		t.Errorf("the operator's Scan through the AWS endpoint: %v, %v", out, err)
	}
}

// wantRefused checks that err is an AWS error with one of codes whose text names no stored data.
func wantRefused(t *testing.T, err error, codes []string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("not refused: %v", err)
	}
	for _, c := range codes {
		if ae.ErrorCode() == c {
			return
		}
	}
	t.Errorf("refused with %s (%s), want one of %v", ae.ErrorCode(), ae.ErrorMessage(), codes)
}

// newVictim is the victim's HTTP API client, with one secret stored.
func newVictim(t *testing.T, p *proc) *client {
	t.Helper()
	c := newClient(t, p, victim)
	if st, _, raw := c.do(t, http.MethodPut, "/secrets/vault", map[string]any{"value": "the-victims-secret-value"}); st/100 != 2 {
		t.Fatalf("PUT /secrets/vault = %d %s", st, raw)
	}
	return c
}

// checkVictimUntouched: no agent was made for the victim and its secret is as it was.
func checkVictimUntouched(t *testing.T, victimAPI *client) {
	t.Helper()
	if st, body, raw := victimAPI.do(t, http.MethodGet, "/agents", nil); st != 200 || len(asList(body["items"])) != 0 {
		t.Errorf("the victim's agents after the attacks: %d %s; want none", st, raw)
	}
	if st, _, raw := victimAPI.do(t, http.MethodGet, "/secrets", nil); st != 200 || !strings.Contains(raw, "vault") {
		t.Errorf("the victim's secrets after the attacks: %d %s; want vault alone", st, raw)
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// TestADevelopersTokenGrantsNothingOnAWS: the HTTP API's developer tokens are not AWS
// credentials; sent as a bearer token to the Lambda Invoke API they invoke nothing.
func TestADevelopersTokenGrantsNothingOnAWS(t *testing.T) {
	p := startLocal(t, t.TempDir(), "--in-memory")
	dev := newVictim(t, p)
	for _, ep := range []string{p.Endpoints["lambda"], p.Endpoints["aws"]} {
		req, _ := http.NewRequest(http.MethodPost, ep+"/2015-03-31/functions/api/invocations", strings.NewReader(string(forgedAPIEvent("POST", "/agents", `{"name":"planted"}`))))
		req.Header.Set("Authorization", "Bearer "+dev.jwt)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 || resp.Header.Get("x-amzn-ErrorType") == "" {
			t.Errorf("Invoke with a developer's token at %s: %d %s; want an AWS 4xx refusal", ep, resp.StatusCode, body)
		}
	}
	checkVictimUntouched(t, dev)
}

// The attacker's page: it posts forged api events to the Lambda Invoke API of every AWS endpoint
// as a page may without asking first (text/plain, no-cors), and sets window.__done when every
// request has settled.
const attackPage = `<!doctype html><script>
const event = %s;
Promise.allSettled(%s.map(u => fetch(u + "/2015-03-31/functions/api/invocations",
  {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: JSON.stringify(event)})))
  .then(r => { window.__done = r.map(x => x.status); });
</script>`

// TestNoWebPageGetsIn: a page on another origin, in a real headless Chromium, posts a forged api
// event to every Lambda endpoint; and a host name that resolves to loopback (DNS rebinding)
// reaches no port. Nothing is written for the victim and every port answers the rebound name
// with a refusal.
func TestNoWebPageGetsIn(t *testing.T) {
	p := startLocal(t, t.TempDir(), "--in-memory")
	victimAPI := newVictim(t, p)
	targets, _ := json.Marshal([]string{p.Endpoints["lambda"], p.Endpoints["aws"]})
	page := fmt.Sprintf(attackPage, forgedAPIEvent("POST", "/agents", `{"name":"planted"}`), targets)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, page)
	}))
	defer evil.Close()
	b := chromium.Start(t, "--host-resolver-rules=MAP evil.example 127.0.0.1")
	actx, cancelA := remote.NewAllocator(context.Background(), b.WSURL, remote.NoModifyURL)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelT()
	if _, err := chromedp.Run(ctx, chromedp.Navigate(evil.URL)); err != nil {
		t.Fatalf("the attacker's page: %v", err)
	}
	// Every request settled (a refused one included): the page did send them.
	if done, err := chromedp.Run(ctx, chromedp.Poll[[]string](`window.__done`, chromedp.WithPollingTimeout(time.Minute))); err != nil || len(done) != 2 {
		t.Fatalf("the attacker's page: %v %v", done, err)
	}
	checkVictimUntouched(t, victimAPI)

	// DNS rebinding: evil.example resolves to 127.0.0.1, so the browser sends Host: evil.example.
	for _, n := range endpointNames {
		u := strings.Replace(p.Endpoints[n], "127.0.0.1", "evil.example", 1) + "/healthz"
		if _, err := chromedp.Run(ctx, chromedp.Navigate(u)); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if !strings.Contains(text, "AccessDeniedException") {
			t.Errorf("%s through a rebound name answered %q; want a refusal", n, text)
		}
	}
}
