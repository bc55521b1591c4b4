package ffmpeg_test

import (
	"context"
	"image/color"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/integrations/providers/ffmpeg"
)

// TestThroughRegistry runs bash_cmd as the integration executor does: file as one string or a list,
// no setup, and Julep's cmd refused with a message pointing at args.
func TestThroughRegistry(t *testing.T) {
	needFFmpeg(t)
	r := integrations.New(nil)
	if err := r.Register(ffmpeg.Provider); err != nil {
		t.Fatal(err)
	}
	img := b64(pngImage(t, 16, 16, color.White))
	for _, file := range []any{img, []any{img}} {
		out, err := r.Execute(context.Background(), "ffmpeg", "", nil, map[string]any{"args": []any{"-i", "in.png", "out.bmp"}, "file": file})
		if err != nil {
			t.Fatalf("file %T: %v", file, err)
		}
		m := out.(map[string]any)
		if m["result"] != true || m["mime_type"] != "image/bmp" || !strings.HasPrefix(m["fileoutput"].(string), "Qk") {
			t.Fatalf("output %v", m)
		}
	}
	// Julep's way ({cmd, file}) reaches the provider's own message, not the schema's "args is required".
	_, err := r.Execute(context.Background(), "ffmpeg", "bash_cmd", nil, map[string]any{"cmd": "ffmpeg -i in.png out.bmp", "file": img})
	if !fault.Is(err, fault.InvalidInput) || !strings.Contains(fault.Message(err), "cmd is a shell command") || !strings.Contains(fault.Message(err), "give the words after ffmpeg as args") {
		t.Fatalf("cmd: err = %v, want the provider's message on cmd", err)
	}
	_, err = r.Execute(context.Background(), "ffmpeg", "bash_cmd", nil, map[string]any{"file": img})
	if !fault.Is(err, fault.InvalidInput) || !strings.Contains(fault.Message(err), "args is required") {
		t.Fatalf("neither args nor cmd: err = %v, want args required", err)
	}
	_, err = r.Execute(context.Background(), "ffmpeg", "bash_cmd", map[string]any{"x": 1}, map[string]any{"args": []any{"-i", "a.png", "b.png"}, "file": img})
	if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != "setup" {
		t.Fatalf("setup given: err = %v", err)
	}
}
