package secrets_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sinew/internal/apicall"
	"sinew/internal/httpapi"
	"sinew/internal/integrations"
	"sinew/internal/integrations/providers/email"
	"sinew/internal/merge"
	"sinew/internal/netguard"
	"sinew/internal/netguard/netguardtest"
	"sinew/internal/secrets"
	"sinew/internal/secrets/secretstest"
	"sinew/internal/secretsapi"
	"sinew/internal/store"
	"sinew/internal/testenv/smtpd"
	"sinew/internal/tool"
)

// TestNoLeakThroughEveryPath writes known secret values through every route this package owns
// (PUT /secrets) and every setup path of the store (agent, task and session metadata, a stored
// tool's integration.setup), runs an integration (email: a real SMTP login) and an api_call (a real
// Authorization header) the way the executors do, and then searches every API answer, every log
// line and every raw DynamoDB item for the values: zero hits, while the SMTP server and the HTTP
// server did receive them.
func TestNoLeakThroughEveryPath(t *testing.T) {
	e := newEnv(t)
	const dev = "dev-leak"
	const (
		smtpPW    = "smtp-password-3e1f0a77c2"  // a developer secret, referenced from agent metadata
		apiKey    = "api-key-b81d44e09c6f"      // a developer secret, referenced in an f-string header
		toolUser  = "tool-setup-user-5a0c9d2e"  // a stored tool's integration.setup
		directHdr = "direct-header-91ce73b4aa"  // written in the session's x-api_call-setup itself
		taskToken = "task-setup-token-0d6f21b8" // written in a task's x-integration-setup
		rotated   = "smtp-password-rotated-7b2" // the secret's second value (PUT over the first)
	)
	values := []string{smtpPW, apiKey, toolUser, directHdr, taskToken, rotated}

	var logs secretstest.Logs
	plainLog := logs.Logger(nil) // API and store: they must log no value at all, with no help
	red := secrets.NewRedactor()
	execLog := logs.Logger(red) // executors: the redacting handler as the second line of defence

	hay := secretstest.Haystacks{}
	answer := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		hay.Add("answers", name+": "+string(b))
	}

	// ---- developer secrets through the HTTP routes ----
	rt := httpapi.New(httpapi.Options{Logger: plainLog})
	secretsapi.Register(rt, secretsapi.Deps{Store: store.New(e.db, e.table, e.env, store.WithLogger(plainLog))})
	srv := httptest.NewServer(httpapi.HTTPHandler(rt.ServeEvent, bearer))
	t.Cleanup(srv.Close)
	call := func(method, path, body string) int {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+dev)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		hay.Add("answers", fmt.Sprintf("%s %s -> %d %v %s", method, path, resp.StatusCode, resp.Header, b))
		return resp.StatusCode
	}
	for _, c := range []struct {
		method, path, body string
		want               int
	}{
		{"PUT", "/secrets/SMTP_PW", `{"value": "` + rotated + `"}`, 201},
		{"PUT", "/secrets/SMTP_PW", `{"value": "` + smtpPW + `"}`, 204},
		{"PUT", "/secrets/API_KEY", `{"value": "` + apiKey + `"}`, 201},
		{"PUT", "/secrets/bad-name", `{"value": "` + apiKey + `"}`, 400},
		{"PUT", "/secrets/X", `{"value": "` + apiKey + `", "extra": "` + smtpPW + `"}`, 400},
		{"PUT", "/secrets/Y", `{"value": 5, "v": "` + smtpPW + `"}`, 400},
		{"GET", "/secrets", "", 200},
		{"GET", "/secrets?limit=1", "", 200},
		{"GET", "/openapi.json", "", 200},
	} {
		if got := call(c.method, c.path, c.body); got != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, got, c.want)
		}
	}

	// ---- setup through the store, as the resources routes write it ----
	st := store.New(e.db, e.table, e.env, store.WithLogger(plainLog))
	smtp := smtpd.Start(t, smtpd.WithUser(toolUser, smtpPW))
	agent, err := st.CreateAgent(bg(), dev, store.Agent{Name: "mailer", Metadata: map[string]any{
		merge.KeyIntegrationSetup: map[string]any{"send": map[string]any{"password": map[string]any{"secret": "SMTP_PW"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	answer("create agent", agent)
	// A write of the redacted answer back keeps the stored reference.
	agent, err = st.UpdateAgent(bg(), dev, agent.ID, func(a *store.Agent) error { a.About = "updated"; return nil })
	if err != nil {
		t.Fatal(err)
	}
	answer("update agent", agent)
	sendTool, err := st.CreateTool(bg(), dev, store.Owner{Kind: store.OwnerAgent, ID: agent.ID}, tool.Tool{
		Name: "send", Type: tool.TypeIntegration,
		Integration: &tool.IntegrationDef{Provider: "email", Setup: map[string]any{
			"host": "127.0.0.1", "port": int64(smtp.Addr.Port()), "user": toolUser,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	answer("create tool", sendTool)
	task, _, err := st.CreateTask(bg(), dev, agent.ID, store.Task{Name: "t", Metadata: map[string]any{
		merge.KeyIntegrationSetup: map[string]any{"other": map[string]any{"token": taskToken}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	answer("create task", task)
	session, err := st.CreateSession(bg(), dev, store.Session{AgentID: agent.ID, Metadata: map[string]any{
		merge.KeyAPICallSetup: map[string]any{"call_api": map[string]any{"headers": map[string]any{
			"Authorization": "$ f'Bearer {secrets.API_KEY}'", "X-Direct": directHdr,
		}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	answer("create session", session)
	for name, get := range map[string]func() (any, error){
		"get agent":   func() (any, error) { return st.GetAgent(bg(), dev, agent.ID) },
		"get task":    func() (any, error) { return st.GetTask(bg(), dev, task.ID) },
		"get session": func() (any, error) { return st.GetSession(bg(), dev, session.ID) },
		"get tool": func() (any, error) {
			return st.GetTool(bg(), dev, store.Owner{Kind: store.OwnerAgent, ID: agent.ID}, sendTool.ID)
		},
		"list secrets": func() (any, error) {
			return st.ListSecrets(bg(), dev, store.Page{Limit: 10})
		},
	} {
		v, err := get()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		answer(name, v)
	}

	// ---- the integration executor: merge lookup, merge, resolve, run (a real SMTP login) ----
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, smtp.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	trip, _ := netguardtest.Tripwire(t)
	guard := netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist("127.0.0.1/32")), trip, netguard.WithLogger(execLog))
	reg := integrations.New(guard, integrations.WithLogger(execLog),
		integrations.WithGetenv(func(k string) string {
			if k == integrations.EnvName("email", "CA_FILE") {
				return ca
			}
			return ""
		}))
	if err := reg.Register(email.Provider); err != nil {
		t.Fatal(err)
	}
	func() {
		scope := red.Scope()
		defer scope.Close()
		src, err := st.MergeSources(bg(), dev, store.MergeRef{AgentID: agent.ID, Tool: "send", ToolID: sendTool.ID})
		if err != nil {
			t.Fatal(err)
		}
		args, setup := merge.Integration(map[string]any{
			"to": "bob@example.com", "from": "alice@example.com", "subject": "hello", "body": "it works",
		}, &tool.IntegrationDef{Provider: "email"}, *src)
		setup, err = secrets.ResolveSetup(bg(), secrets.NewResolver(st, dev, scope), setup)
		if err != nil {
			t.Fatal(err)
		}
		execLog.Info("integration setup resolved", "setup", setup) // a careless line the handler must catch
		out, err := reg.Execute(bg(), "email", "", setup, args)
		if err != nil {
			t.Fatalf("email: %v", err)
		}
		answer("email result", out)
		// A failing call: its error goes to the history and the logs.
		setup["password"] = "wrong-" + smtpPW
		scope.Add(setup["password"].(string))
		_, err = reg.Execute(bg(), "email", "", setup, args)
		if err == nil {
			t.Fatal("email with a wrong password succeeded")
		}
		answer("email error", map[string]any{"error": err.Error()})
		execLog.Error("integration failed", "err", err)
	}()
	msgs := smtp.Messages()
	if len(msgs) != 1 || msgs[0].User != toolUser || !strings.Contains(string(msgs[0].Data), "it works") {
		t.Fatalf("the SMTP server got %+v", msgs)
	}

	// ---- the api_call executor: the header reaches the server, resolved ----
	var gotAuth, gotDirect string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotDirect = r.Header.Get("Authorization"), r.Header.Get("X-Direct")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	t.Cleanup(target.Close)
	apiGuard := netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist(strings.TrimPrefix(target.URL, "http://"))), trip)
	ex := apicall.New(apiGuard, apicall.WithLogger(execLog))
	func() {
		scope := red.Scope()
		defer scope.Close()
		src, err := st.MergeSources(bg(), dev, store.MergeRef{AgentID: agent.ID, SessionID: session.ID, Tool: "call_api"})
		if err != nil {
			t.Fatal(err)
		}
		def := &tool.APICallDef{Method: "GET", URL: target.URL + "/v1"}
		def, metaSetup, err := secrets.ResolveAPICall(bg(), secrets.NewResolver(st, dev, scope), def, src.Metadata(merge.KeyAPICallSetup))
		if err != nil {
			t.Fatal(err)
		}
		res, err := ex.Execute(bg(), def, apicall.Input{Call: map[string]any{}, MetaSetup: metaSetup})
		if err != nil {
			t.Fatalf("api_call: %v", err)
		}
		answer("api_call result", res)
		execLog.Debug("api_call sent", "headers", metaSetup["headers"])
	}()
	if gotAuth != "Bearer "+apiKey || gotDirect != directHdr {
		t.Fatalf("the server got Authorization %q (want the resolved key: %v), X-Direct ok: %v",
			strings.ReplaceAll(gotAuth, apiKey, "<key>"), gotAuth == "Bearer "+apiKey, gotDirect == directHdr)
	}

	// ---- the search ----
	hay.Add("logs", logs.String())
	hay.Add("table", secretstest.DumpTable(t, e.db, e.table))
	if !strings.Contains(hay["logs"], secrets.RedactedText) {
		t.Error("the careless executor lines were not redacted (or not logged)")
	}
	if n := strings.Count(hay["table"], "\n"); n < 8 {
		t.Errorf("the table dump has %d items; the test wrote more", n)
	}
	secretstest.AssertNoLeak(t, hay, values)
}

func bearer(r *http.Request) (map[string]string, error) {
	dev, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || dev == "" {
		return nil, fmt.Errorf("no bearer token")
	}
	return map[string]string{"sub": dev}, nil
}
