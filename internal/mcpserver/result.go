package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sinew/internal/jsonv"
	"sinew/internal/store"
)

// MetaExecutionID is the result _meta key naming the call's execution.
const MetaExecutionID = "sinew/execution_id"

// Polling bounds: the first reads come soon (most calls take tens of milliseconds), later ones
// less often.
const (
	firstPoll = 5 * time.Millisecond
	maxPoll   = 200 * time.Millisecond
)

// wait reads the execution until it has ended, for up to d; nil when the wait (or the request)
// ends first.
func (s *service) wait(ctx context.Context, dev, id string, d time.Duration) (*store.Execution, error) {
	deadline := time.Now().Add(d)
	delay := firstPoll
	for {
		x, err := s.d.Store.GetExecution(ctx, dev, id)
		if err != nil {
			return nil, err
		}
		if x.Status != store.ExecRunning && x.Status != store.ExecAwaitingInput {
			return x, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, nil
		}
		t := time.NewTimer(min(delay, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-t.C:
		}
		delay = min(2*delay, maxPoll)
	}
}

// result answers an ended execution: its output as content, or its error as a tool error.
func (s *service) result(ctx context.Context, dev string, x *store.Execution) (*mcp.CallToolResult, error) {
	// A result stored by reference is answered as its value up to the inline limit, as GET
	// /executions/{id} answers it.
	out, err := s.d.Store.InlineRefs(ctx, dev, x.Output, store.AnswerInlineLimit)
	if err != nil {
		s.d.Logger.ErrorContext(ctx, "mcp: reading the result", "execution_id", x.ExecutionID, "error", err.Error())
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
	}
	if x.Status == store.ExecSucceeded {
		obj, _ := out.(map[string]any)
		return content(x.ExecutionID, obj["output"]), nil
	}
	typ, msg := "Sinew.Cancelled", "the execution was cancelled"
	if e, ok := x.Error.(map[string]any); ok {
		typ, _ = e["type"].(string)
		msg, _ = e["message"].(string)
	} else if x.Status != store.ExecCancelled {
		typ, msg = "Sinew.Failed", "the execution ended "+string(x.Status)
	}
	return errorResult(x.ExecutionID, typ, msg), nil
}

// content is a tool's output as MCP content: a string as text; an object as structured content
// and its JSON as text (for clients that read only text), with each image in it (a data: URL such
// as the browser's screenshot, or a file with an image mime_type such as ffmpeg's) as image
// content, named in the structured copy instead of repeated there; anything else as JSON text.
func content(execID string, output any) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Meta: mcp.Meta{MetaExecutionID: execID}}
	switch v := output.(type) {
	case string:
		res.Content = []mcp.Content{&mcp.TextContent{Text: v}}
	case map[string]any:
		rest, images := extractImages(v)
		res.StructuredContent = rest
		res.Content = append([]mcp.Content{&mcp.TextContent{Text: jsonv.EncodeString(rest)}}, images...)
	default:
		res.Content = []mcp.Content{&mcp.TextContent{Text: jsonv.EncodeString(v)}}
	}
	return res
}

// extractImages takes the images out of an output object's top-level fields.
func extractImages(v map[string]any) (map[string]any, []mcp.Content) {
	rest := make(map[string]any, len(v))
	var images []mcp.Content
	placeholder := func(mime string, n int) string {
		return fmt.Sprintf("(%s, %d bytes: image content %d of this result)", mime, n, len(images))
	}
	fileMime, _ := v["mime_type"].(string)
	for _, k := range slices.Sorted(maps.Keys(v)) { // numbered in a stable order
		e := v[k]
		rest[k] = e
		s, ok := e.(string)
		if !ok {
			continue
		}
		mime, data, isImage := dataURL(s)
		if !isImage && k == "fileoutput" && strings.HasPrefix(fileMime, "image/") {
			if b, err := base64.StdEncoding.DecodeString(s); err == nil {
				mime, data, isImage = fileMime, b, true
			}
		}
		if isImage {
			images = append(images, &mcp.ImageContent{MIMEType: mime, Data: data})
			rest[k] = placeholder(mime, len(data))
		}
	}
	return rest, images
}

// dataURL decodes a base64 image data: URL.
func dataURL(s string) (mime string, data []byte, ok bool) {
	rest, found := strings.CutPrefix(s, "data:image/")
	if !found {
		return "", nil, false
	}
	head, b64, found := strings.Cut(rest, ";base64,")
	if !found || strings.ContainsAny(head, ";,") {
		return "", nil, false
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", nil, false
	}
	return "image/" + head, b, true
}

// errorResult is a tool error: the call ran (or could not run) and failed.
func errorResult(execID, typ, msg string) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: typ + ": " + msg}},
		StructuredContent: map[string]any{"error": map[string]any{"type": typ, "message": msg}}}
	if execID != "" {
		res.Meta = mcp.Meta{MetaExecutionID: execID}
		res.StructuredContent.(map[string]any)["execution_id"] = execID
	}
	return res
}

// stillRunning answers a call that outlived the wait: it goes on running as its execution.
func stillRunning(execID, key string) *mcp.CallToolResult {
	again := ""
	if key != "" {
		again = ", or call the tool again with the same idempotency key to wait for it once more"
	}
	text := fmt.Sprintf("The call is still running as execution %s and goes on running. GET /executions/%s (with this server's bearer token) gives its status and, once it has ended, its result%s.",
		execID, execID, again)
	return &mcp.CallToolResult{Meta: mcp.Meta{MetaExecutionID: execID}, Content: []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: map[string]any{"execution_id": execID, "status": string(store.ExecRunning), "result_path": "/executions/" + execID}}
}
