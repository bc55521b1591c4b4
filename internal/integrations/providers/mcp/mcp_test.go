package mcp_test

import (
	"context"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"sinew/internal/fault"
	"sinew/internal/integrations/providers/mcp"
	"sinew/internal/netguard"
	"sinew/internal/netguard/netguardtest"
	"sinew/internal/testenv/mcpserver"
)

func loopbackEnv(t testing.TB) mcp.Env {
	trip, _ := netguardtest.Tripwire(t)
	return mcp.Env{Guard: netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist("127.0.0.1/32")), trip)}
}

type transport struct {
	name string
	url  func(*mcpserver.Server) string
}

var transports = []transport{
	{"http", func(s *mcpserver.Server) string { return s.StreamableURL }},
	{"sse", func(s *mcpserver.Server) string { return s.SSEURL }},
}

func intp(n int) *int { return &n }

func TestListTools(t *testing.T) {
	srv := mcpserver.Start(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			out, err := mcp.ListTools(context.Background(), loopbackEnv(t), mcp.Setup{Transport: tr.name, HTTPURL: tr.url(srv)}, mcp.ListToolsArguments{Dummy: "dummy"})
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			// The server pages two at a time: all five arrive only if pagination is followed.
			var names []string
			byName := map[string]mcp.ToolInfo{}
			for _, ti := range out.Tools {
				names = append(names, ti.Name)
				byName[ti.Name] = ti
			}
			want := []string{mcpserver.ToolAdd, mcpserver.ToolEcho, mcpserver.ToolFail, mcpserver.ToolImage, mcpserver.ToolSlow}
			if !reflect.DeepEqual(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			add := byName[mcpserver.ToolAdd]
			if add.Description == nil || *add.Description != "adds two integers" {
				t.Errorf("add description %v", add.Description)
			}
			if byName[mcpserver.ToolFail].Description != nil {
				t.Errorf("fail has no description, got %q", *byName[mcpserver.ToolFail].Description)
			}
			schema, _ := add.InputSchema.(map[string]any)
			props, _ := schema["properties"].(map[string]any)
			if schema["type"] != "object" || props["a"] == nil || props["b"] == nil {
				t.Errorf("add input_schema %v", add.InputSchema)
			}
		})
	}
}

func TestCallTool(t *testing.T) {
	srv := mcpserver.Start(t)
	sp := func(s string) *string { return &s }
	tests := []struct {
		name string
		args mcp.CallToolArguments
		want mcp.CallToolOutput
	}{
		{"structured", mcp.CallToolArguments{ToolName: mcpserver.ToolAdd, Arguments: map[string]any{"a": 2, "b": 3}},
			mcp.CallToolOutput{Text: sp("2+3=5"), Structured: map[string]any{"sum": float64(5)}, Content: []map[string]any{{"type": "text", "text": "2+3=5"}}}},
		{"texts joined", mcp.CallToolArguments{ToolName: mcpserver.ToolEcho, Arguments: map[string]any{"text": "hi"}, TimeoutSeconds: intp(10)},
			mcp.CallToolOutput{Text: sp("hi\nHI"), Content: []map[string]any{{"type": "text", "text": "hi"}, {"type": "text", "text": "HI"}}}},
		{"is_error reported, not raised", mcp.CallToolArguments{ToolName: mcpserver.ToolFail},
			mcp.CallToolOutput{Text: sp("it broke"), Content: []map[string]any{{"type": "text", "text": "it broke"}}, IsError: true}},
		{"image item, no text", mcp.CallToolArguments{ToolName: mcpserver.ToolImage, TimeoutSeconds: intp(0)},
			mcp.CallToolOutput{Content: []map[string]any{{"type": "image", "data": "iQ==", "mimeType": "image/png"}}}},
	}
	for _, tr := range transports {
		for _, tc := range tests {
			t.Run(tr.name+"/"+tc.name, func(t *testing.T) {
				got, err := mcp.CallTool(context.Background(), loopbackEnv(t), mcp.Setup{Transport: tr.name, HTTPURL: tr.url(srv)}, tc.args)
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got  %#v\nwant %#v", got, tc.want)
				}
			})
		}
	}
}

func TestHeadersAndAuth(t *testing.T) {
	srv := mcpserver.Start(t, mcpserver.WithToken("tok"))
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			setup := mcp.Setup{Transport: tr.name, HTTPURL: tr.url(srv), HTTPHeaders: map[string]string{"Authorization": "Bearer tok", "X-Probe": "1"}}
			before := srv.Probes()
			if _, err := mcp.CallTool(context.Background(), loopbackEnv(t), setup, mcp.CallToolArguments{ToolName: mcpserver.ToolAdd, Arguments: map[string]any{"a": 1, "b": 1}}); err != nil {
				t.Fatalf("with the token: %v", err)
			}
			if srv.Probes() == before {
				t.Error("the setup's headers did not reach the server")
			}
			setup.HTTPHeaders = map[string]string{"Authorization": "Bearer wrong"}
			_, err := mcp.ListTools(context.Background(), loopbackEnv(t), setup, mcp.ListToolsArguments{})
			if !fault.Is(err, fault.Provider) || !strings.Contains(fault.Message(err), "HTTP 401") || !strings.Contains(fault.Message(err), "http_headers") {
				t.Fatalf("wrong token: err = %v (kind %s)", err, fault.KindOf(err))
			}
			if strings.Contains(err.Error(), "wrong") && strings.Contains(fault.Message(err), "Bearer wrong") {
				t.Error("the message shows the header's value")
			}
		})
	}
}

func TestFailuresAreTyped(t *testing.T) {
	ok := mcpserver.Start(t)
	unavailable := mcpserver.Start(t, mcpserver.WithStatus(http.StatusServiceUnavailable))
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/mcp"
	_ = ln.Close()
	tests := []struct {
		name   string
		url    func(tr transport) string
		env    func(mcp.Env) mcp.Env
		args   mcp.CallToolArguments
		kind   fault.Kind
		substr string
	}{
		{"unknown tool", func(tr transport) string { return tr.url(ok) }, nil, mcp.CallToolArguments{ToolName: "nope"}, fault.Provider, `unknown tool "nope"`},
		{"timeout_seconds runs out", func(tr transport) string { return tr.url(ok) }, nil, mcp.CallToolArguments{ToolName: mcpserver.ToolSlow, Arguments: map[string]any{"ms": 2000}, TimeoutSeconds: intp(1)}, fault.Timeout, "timeout_seconds"},
		{"no answer within the provider's bound is transient", func(tr transport) string { return tr.url(ok) }, func(e mcp.Env) mcp.Env { e.Timeout = time.Second; return e }, mcp.CallToolArguments{ToolName: mcpserver.ToolSlow, Arguments: map[string]any{"ms": 2000}, TimeoutSeconds: intp(0)}, fault.Transient, "did not answer"},
		{"server answers 503", func(tr transport) string { return tr.url(unavailable) }, nil, mcp.CallToolArguments{ToolName: mcpserver.ToolAdd}, fault.Transient, "HTTP 503"},
		{"wrong path is 404", func(tr transport) string { return strings.TrimSuffix(tr.url(ok), "/"+tr.name) + "/missing" }, nil, mcp.CallToolArguments{ToolName: mcpserver.ToolAdd}, fault.Provider, "HTTP 404"},
		{"connection refused", func(transport) string { return closed }, nil, mcp.CallToolArguments{ToolName: mcpserver.ToolAdd}, fault.Transient, "could not connect"},
		{"response over the bound", func(tr transport) string { return tr.url(ok) }, func(e mcp.Env) mcp.Env { e.MaxResponseBytes = 64; return e }, mcp.CallToolArguments{ToolName: mcpserver.ToolAdd}, fault.TooLarge, "over 64 bytes"},
	}
	for _, tr := range transports {
		for _, tc := range tests {
			t.Run(tr.name+"/"+tc.name, func(t *testing.T) {
				env := loopbackEnv(t)
				if tc.env != nil {
					env = tc.env(env)
				}
				_, err := mcp.CallTool(context.Background(), env, mcp.Setup{Transport: tr.name, HTTPURL: tc.url(tr)}, tc.args)
				if !fault.Is(err, tc.kind) || !strings.Contains(fault.Message(err), tc.substr) {
					t.Fatalf("err = %v (kind %s, message %q), want %s saying %q", err, fault.KindOf(err), fault.Message(err), tc.kind, tc.substr)
				}
			})
		}
	}
}

func TestRefusedByGuard(t *testing.T) {
	canary := netguardtest.NewCanary(t)
	trip, dialed := netguardtest.Tripwire(t)
	env := mcp.Env{Guard: netguard.New(netguard.WithResolver(netguardtest.Resolver()), trip)}
	for _, target := range netguardtest.Targets(canary) {
		for _, tr := range []string{"http", "sse"} {
			_, err := mcp.ListTools(context.Background(), env, mcp.Setup{Transport: tr, HTTPURL: target.URL}, mcp.ListToolsArguments{})
			if !fault.Is(err, fault.Forbidden) {
				t.Errorf("%s over %s: err = %v (kind %s), want Forbidden", target.Name, tr, err, fault.KindOf(err))
			}
		}
	}
	if canary.Accepted() != 0 || dialed.Load() != 0 {
		t.Fatalf("refused targets were reached: %d accepted, %d dialed", canary.Accepted(), dialed.Load())
	}
}

func TestValidationNamesTheField(t *testing.T) {
	good := mcp.Setup{Transport: "http", HTTPURL: "https://mcp.example.com/mcp"}
	tests := []struct {
		name  string
		setup func(*mcp.Setup)
		args  mcp.CallToolArguments
		field string
	}{
		{"no transport", func(s *mcp.Setup) { s.Transport = "" }, mcp.CallToolArguments{ToolName: "x"}, "setup.transport"},
		{"stdio", func(s *mcp.Setup) { s.Transport = "stdio" }, mcp.CallToolArguments{ToolName: "x"}, "setup.transport"},
		{"other transport", func(s *mcp.Setup) { s.Transport = "websocket" }, mcp.CallToolArguments{ToolName: "x"}, "setup.transport"},
		{"command", func(s *mcp.Setup) { s.Command = "/bin/sh" }, mcp.CallToolArguments{ToolName: "x"}, "setup.command"},
		{"args", func(s *mcp.Setup) { s.Args = []string{"-c"} }, mcp.CallToolArguments{ToolName: "x"}, "setup.args"},
		{"env", func(s *mcp.Setup) { s.Env = map[string]string{"A": "b"} }, mcp.CallToolArguments{ToolName: "x"}, "setup.env"},
		{"no url", func(s *mcp.Setup) { s.HTTPURL = "" }, mcp.CallToolArguments{ToolName: "x"}, "setup.http_url"},
		{"file url", func(s *mcp.Setup) { s.HTTPURL = "file:///etc/passwd" }, mcp.CallToolArguments{ToolName: "x"}, "setup.http_url"},
		{"relative url", func(s *mcp.Setup) { s.HTTPURL = "/mcp" }, mcp.CallToolArguments{ToolName: "x"}, "setup.http_url"},
		{"credentials in url", func(s *mcp.Setup) { s.HTTPURL = "https://u:p@mcp.example.com/" }, mcp.CallToolArguments{ToolName: "x"}, "setup.http_url"},
		{"bad header name", func(s *mcp.Setup) { s.HTTPHeaders = map[string]string{"Bad Name": "x"} }, mcp.CallToolArguments{ToolName: "x"}, "setup.http_headers"},
		{"header injection", func(s *mcp.Setup) { s.HTTPHeaders = map[string]string{"X-A": "1\r\nX-B: 2"} }, mcp.CallToolArguments{ToolName: "x"}, "setup.http_headers"},
		{"no tool_name", nil, mcp.CallToolArguments{}, "tool_name"},
		{"negative timeout", nil, mcp.CallToolArguments{ToolName: "x", TimeoutSeconds: intp(-1)}, "timeout_seconds"},
		{"timeout too long", nil, mcp.CallToolArguments{ToolName: "x", TimeoutSeconds: intp(601)}, "timeout_seconds"},
	}
	env := mcp.Env{Guard: netguard.New()} // refuses everything: validation comes first
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := good
			if tc.setup != nil {
				tc.setup(&s)
			}
			_, err := mcp.CallTool(context.Background(), env, s, tc.args)
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tc.field || !strings.Contains(fault.Message(err), tc.field) {
				t.Fatalf("err = %v (kind %s, field %q), want InvalidInput naming %s", err, fault.KindOf(err), fault.FieldOf(err), tc.field)
			}
		})
	}
}

func BenchmarkCallTool(b *testing.B) {
	srv := mcpserver.Start(b)
	for _, tr := range transports {
		b.Run(tr.name, func(b *testing.B) {
			env := mcp.Env{Guard: netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist("127.0.0.1/32")))}
			setup := mcp.Setup{Transport: tr.name, HTTPURL: tr.url(srv)}
			args := mcp.CallToolArguments{ToolName: mcpserver.ToolAdd, Arguments: map[string]any{"a": 1, "b": 2}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := mcp.CallTool(context.Background(), env, setup, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestNoGoroutinesLeftBehind(t *testing.T) {
	srv := mcpserver.Start(t)
	env := loopbackEnv(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			setup := mcp.Setup{Transport: tr.name, HTTPURL: tr.url(srv)}
			args := mcp.CallToolArguments{ToolName: mcpserver.ToolAdd, Arguments: map[string]any{"a": 1, "b": 2}}
			if _, err := mcp.CallTool(context.Background(), env, setup, args); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			before := runtime.NumGoroutine()
			for range 10 {
				if _, err := mcp.CallTool(context.Background(), env, setup, args); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for runtime.NumGoroutine() > before+3 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > before+3 {
				t.Fatalf("%d goroutines after 10 calls, %d before", n, before)
			}
		})
	}
}

func TestCallerDeadlineIsTimeout(t *testing.T) {
	srv := mcpserver.Start(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			_, err := mcp.CallTool(ctx, loopbackEnv(t), mcp.Setup{Transport: tr.name, HTTPURL: tr.url(srv)},
				mcp.CallToolArguments{ToolName: mcpserver.ToolSlow, Arguments: map[string]any{"ms": 2000}, TimeoutSeconds: intp(0)})
			if !fault.Is(err, fault.Timeout) || !strings.Contains(fault.Message(err), "ran out of time") {
				t.Fatalf("err = %v (kind %s)", err, fault.KindOf(err))
			}
		})
	}
}
