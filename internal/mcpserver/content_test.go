package mcpserver

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sinew/internal/httpapi"
)

// TestContent: how a tool's output becomes MCP content, images included (ffmpeg's file output and
// the browser's screenshot data: URL).
func TestContent(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	b64 := base64.StdEncoding.EncodeToString(png)
	for _, c := range []struct {
		name       string
		output     any
		texts      int
		images     int
		structured bool
		inText     string
		notInText  string
	}{
		{"string", "plain words", 1, 0, false, "plain words", ""},
		{"object", map[string]any{"a": int64(1)}, 1, 0, true, `"a":1`, ""},
		{"array", []any{"x"}, 1, 0, false, `["x"]`, ""},
		{"ffmpeg image", map[string]any{"fileoutput": b64, "mime_type": "image/png", "result": true}, 1, 1, true, "image/png, 12 bytes", b64},
		{"ffmpeg video stays data", map[string]any{"fileoutput": b64, "mime_type": "video/mp4", "result": true}, 1, 0, true, b64, ""},
		{"browser screenshot", map[string]any{"base64_image": "data:image/png;base64," + b64, "output": nil}, 1, 1, true, "image content 1", b64},
		{"not base64", map[string]any{"base64_image": "data:image/png;base64,@@@"}, 1, 0, true, "@@@", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := content("exec-1", c.output)
			var texts, images int
			var text string
			for _, ct := range res.Content {
				switch x := ct.(type) {
				case *mcp.TextContent:
					texts++
					text += x.Text
				case *mcp.ImageContent:
					images++
					if x.MIMEType != "image/png" || !bytes.Equal(x.Data, png) {
						t.Errorf("image %s %q", x.MIMEType, x.Data)
					}
				}
			}
			if texts != c.texts || images != c.images || (res.StructuredContent != nil) != c.structured {
				t.Errorf("%d texts, %d images, structured %v", texts, images, res.StructuredContent != nil)
			}
			if !strings.Contains(text, c.inText) || (c.notInText != "" && strings.Contains(text, c.notInText)) {
				t.Errorf("text %q", text)
			}
			if res.Meta[MetaExecutionID] != "exec-1" || res.IsError {
				t.Errorf("meta %v isError %v", res.Meta, res.IsError)
			}
		})
	}
}

func TestErrorAndRunningResults(t *testing.T) {
	e := errorResult("exec-2", "Sinew.NotFound", "agent x not found")
	if !e.IsError || e.Content[0].(*mcp.TextContent).Text != "Sinew.NotFound: agent x not found" || e.Meta[MetaExecutionID] != "exec-2" {
		t.Errorf("error result %+v", e)
	}
	r := stillRunning("exec-3", "k")
	text := r.Content[0].(*mcp.TextContent).Text
	if r.IsError || !strings.Contains(text, "GET /executions/exec-3") || !strings.Contains(text, "same idempotency key") {
		t.Errorf("running result %q", text)
	}
	if !strings.Contains(stillRunning("exec-4", "").Content[0].(*mcp.TextContent).Text, "exec-4") {
		t.Error("running result without a key")
	}
}

func TestMetadata(t *testing.T) {
	for _, c := range []struct{ host, proto, path, issuer, resource string }{
		{"127.0.0.1:8080", "", MetadataPath, "", "http://127.0.0.1:8080"},
		{"abc.execute-api.eu-west-1.amazonaws.com", "https", MetadataPath + "/agents/A/mcp", "https://issuer", "https://abc.execute-api.eu-west-1.amazonaws.com/agents/A/mcp"},
		{"api.example.com", "", MetadataPath + "/sessions/S/mcp", "", "https://api.example.com/sessions/S/mcp"},
	} {
		ev := &events.APIGatewayV2HTTPRequest{Headers: map[string]string{"host": c.host}}
		if c.proto != "" {
			ev.Headers["x-forwarded-proto"] = c.proto
		}
		m := metadata(&httpapi.Request{Path: c.path, Event: ev}, c.issuer)
		if m["resource"] != c.resource {
			t.Errorf("%s %s: resource %v, want %s", c.host, c.path, m["resource"], c.resource)
		}
		if _, has := m["authorization_servers"]; has != (c.issuer != "") {
			t.Errorf("authorization_servers %v with issuer %q", m["authorization_servers"], c.issuer)
		}
	}
}
