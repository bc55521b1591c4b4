// Package mcpserver is a real MCP server for tests (the official Go SDK) on loopback.
//
// It serves the same tools over streamable HTTP (/mcp) and SSE (/sse), with a small page size so
// clients must follow pagination, and optionally a bearer token it requires.
package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is a running test MCP server.
type Server struct {
	// StreamableURL and SSEURL are the two transports' endpoints.
	StreamableURL string
	SSEURL        string
	// SDK is the server itself: a test adds or removes tools between calls (AddTool, RemoveTools).
	SDK *mcp.Server
	// Requests counts HTTP requests that reached the server.
	Requests atomic.Int64
	// probes counts requests that carried an X-Probe header.
	probes atomic.Int64
}

// Probes is how many requests carried the X-Probe header.
func (s *Server) Probes() int64 { return s.probes.Load() }

type config struct {
	token  string
	status int
}

// Option configures a Server.
type Option func(*config)

// WithToken makes the server answer 401 unless Authorization is "Bearer " + token.
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// WithStatus makes the server answer every request with status (a broken or overloaded server).
func WithStatus(status int) Option { return func(c *config) { c.status = status } }

// Tool names and what they do.
const (
	ToolAdd   = "add"   // {a, b} → structured {sum}, text "a+b=sum"
	ToolEcho  = "echo"  // {text} → two text items: text, and text in upper case
	ToolFail  = "fail"  // → isError with a text item
	ToolSlow  = "slow"  // {ms} → sleeps ms (or until cancelled), then text "done"
	ToolImage = "image" // → one image item (a 1-byte PNG stand-in)
)

type addIn struct {
	A int `json:"a" jsonschema:"first addend"`
	B int `json:"b" jsonschema:"second addend"`
}
type addOut struct {
	Sum int `json:"sum"`
}
type echoIn struct {
	Text string `json:"text"`
}
type slowIn struct {
	MS int `json:"ms"`
}

// New builds the SDK server with the tools.
func New() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "sinew-test", Version: "1"}, &mcp.ServerOptions{PageSize: 2})
	mcp.AddTool(s, &mcp.Tool{Name: ToolAdd, Description: "adds two integers"}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
		out := addOut{Sum: in.A + in.B}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d+%d=%d", in.A, in.B, out.Sum)}}}, out, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: ToolEcho, Description: "echoes text twice"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}, &mcp.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: ToolFail}, func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: ToolSlow, Description: "waits"}, func(ctx context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: ToolImage}, func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{0x89}, MIMEType: "image/png"}}}, nil, nil
	})
	return s
}

// Start serves both transports on 127.0.0.1 until the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	srv := New()
	get := func(*http.Request) *mcp.Server { return srv }
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(get, nil))
	mux.Handle("/sse", mcp.NewSSEHandler(get, nil))
	s := &Server{SDK: srv}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		if r.Header.Get("X-Probe") != "" {
			s.probes.Add(1)
		}
		if cfg.status != 0 {
			http.Error(w, http.StatusText(cfg.status), cfg.status)
			return
		}
		if cfg.token != "" && r.Header.Get("Authorization") != "Bearer "+cfg.token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	s.StreamableURL = hs.URL + "/mcp"
	s.SSEURL = hs.URL + "/sse"
	return s
}
