package ffmpeg_test

import (
	"context"
	"image/color"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
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

// callTool makes the tool call an agent would: bash_cmd through the registry, with args and one
// base64 file per -i.
func callTool(t *testing.T, args []string, files ...[]byte) (map[string]any, error) {
	t.Helper()
	r := integrations.New(nil)
	if err := r.Register(ffmpeg.Provider); err != nil {
		t.Fatal(err)
	}
	words := make([]any, len(args))
	for i, a := range args {
		words[i] = a
	}
	encoded := make([]any, len(files))
	for i, f := range files {
		encoded[i] = b64(f)
	}
	out, err := r.Execute(context.Background(), "ffmpeg", "bash_cmd", nil, map[string]any{"args": words, "file": encoded})
	m, _ := out.(map[string]any)
	return m, err
}

// TestToolCallRefusesWhatReachesOutside holds, construct by construct, the ways a tool call could
// make ffmpeg read or write something other than its inputs and its output (a muxer or protocol
// that opens other files or URLs, a filter or demuxer that opens names of its own, an image
// sequence pattern): each is refused before ffmpeg runs, naming the argument and the construct.
func TestToolCallRefusesWhatReachesOutside(t *testing.T) {
	img := pngImage(t, 8, 8, color.White)
	tests := []struct {
		name  string
		args  []string
		field string
		says  string
	}{
		{"tee muxer", []string{"-i", "in.png", "-f", "tee", "[f=image2]a.png|[f=image2]b.png"}, "args[3]", `"tee"`},
		{"tee protocol", []string{"-i", "in.png", "tee:a.png|b.png"}, "args[2]", "tee: protocol"},
		{"subfile protocol", []string{"-i", "subfile:in.png", "out.png"}, "args[1]", "subfile: protocol"},
		{"subfile protocol, comma form", []string{"-i", "subfile,,start,0,end,64,,:in.png", "out.png"}, "args[1]", "subfile: protocol"},
		{"pipe input", []string{"-i", "pipe:0", "out.png"}, "args[1]", "pipe: protocol"},
		{"pipe output", []string{"-i", "in.png", "pipe:1"}, "args[2]", "pipe: protocol"},
		{"stdin as input", []string{"-i", "-", "out.png"}, "args[1]", "standard input"},
		{"stdout as output", []string{"-i", "in.png", "-f", "image2", "-"}, "args[4]", "standard output"},
		{"image2 %d input", []string{"-f", "image2", "-i", "img%03d.png", "out.png"}, "args[3]", "image sequence pattern"},
		{"image2 %d output", []string{"-i", "in.png", "frame%d.png"}, "args[2]", "image sequence pattern"},
		{"image2 glob input", []string{"-i", "*.png", "out.png"}, "args[1]", "image sequence pattern"},
		{"image2 pattern_type glob", []string{"-pattern_type", "glob", "-i", "in.png", "out.png"}, "args[0]", "pattern_type"},
		{"subtitles filter", []string{"-i", "in.png", "-vf", "subtitles=filename=in.png", "out.png"}, "args[3]", "filter subtitles"},
		{"ass filter", []string{"-i", "in.png", "-vf", "ass=in.png", "out.png"}, "args[3]", "filter ass"},
		{"movie filter", []string{"-i", "in.png", "-filter_complex", "movie=in.png[m];[0:v][m]overlay", "out.png"}, "args[3]", "filter movie"},
		{"amovie filter", []string{"-i", "in.png", "-filter_complex", "amovie=in.png", "out.wav"}, "args[3]", "filter amovie"},
		{"lavfi demuxer", []string{"-f", "lavfi", "-i", "movie=in.png", "out.png"}, "args[1]", `"lavfi"`},
		{"lavfi costly source in a graph", []string{"-i", "in.png", "-filter_complex", "mandelbrot=s=8000x8000", "out.png"}, "args[3]", "filter mandelbrot"},
		{"lavfi source that reads a file", []string{"-i", "in.png", "-filter_complex", "life=filename=in.png", "out.png"}, "args[3]", "filter life"},
		{"concat demuxer", []string{"-f", "concat", "-i", "list.png", "out.png"}, "args[1]", `"concat"`},
		{"concat protocol", []string{"-i", "concat:in.png|in.png", "out.png"}, "args[1]", "concat: protocol"},
		{"concatf protocol", []string{"-i", "concatf:in.png", "out.png"}, "args[1]", "concatf: protocol"},
		{"hls demuxer", []string{"-f", "hls", "-i", "in.m3u8", "out.png"}, "args[1]", `"hls"`},
		{"hls muxer", []string{"-i", "in.png", "-f", "hls", "out.ts"}, "args[3]", `"hls"`},
		{"hls playlist output", []string{"-i", "in.png", "out.m3u8"}, "args[2]", "HLS playlist"},
		{"hls segment option", []string{"-i", "in.png", "-hls_segment_filename", "s.ts", "out.ts"}, "args[2]", "-hls_segment_filename"},
		{"hls nested protocol", []string{"-i", "hls+file:in.m3u8", "out.png"}, "args[1]", "hls: protocol"},
		{"dash demuxer", []string{"-f", "dash", "-i", "in.mpd", "out.png"}, "args[1]", `"dash"`},
		{"dash muxer", []string{"-i", "in.png", "-f", "dash", "out.mp4"}, "args[3]", `"dash"`},
		{"dash manifest output", []string{"-i", "in.png", "out.mpd"}, "args[2]", "DASH manifest"},
		{"file protocol outside", []string{"-i", "file:/etc/passwd", "out.png"}, "args[1]", "file: protocol"},
		{"absolute path", []string{"-i", "/etc/passwd", "out.png"}, "args[1]", "absolute path"},
		{"parent directory", []string{"-i", "in.png", "../out.png"}, "args[2]", `".."`},
		{"http to another host", []string{"-i", "http://169.254.169.254/latest/meta-data/", "out.png"}, "args[1]", "http: protocol"},
		{"fd protocol", []string{"-i", "fd:3", "out.png"}, "args[1]", "fd: protocol"},
		{"data protocol", []string{"-i", "data:image/png;base64,iVBORw0KGgo=", "out.png"}, "args[1]", "data: protocol"},
		{"async protocol", []string{"-i", "async:in.png", "out.png"}, "args[1]", "async: protocol"},
		{"cache protocol", []string{"-i", "cache:in.png", "out.png"}, "args[1]", "cache: protocol"},
		{"crypto protocol", []string{"-i", "crypto:in.png", "out.png"}, "args[1]", "crypto: protocol"},
		{"crypto nested scheme", []string{"-i", "crypto+file:in.png", "out.png"}, "args[1]", "crypto: protocol"},
		{"cache over crypto over http", []string{"-i", "cache:crypto+http:in.png", "out.png"}, "args[1]", "cache: protocol"},
		{"dtls protocol", []string{"-i", "dtls:127.0.0.1:4433", "out.png"}, "args[1]", "dtls: protocol"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := make([][]byte, strings.Count(" "+strings.Join(tc.args, " ")+" ", " -i "))
			for i := range files {
				files[i] = img
			}
			out, err := callTool(t, tc.args, files...)
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tc.field || !strings.Contains(fault.Message(err), tc.says) {
				t.Fatalf("%q: out %v, err = %v (kind %s, field %q); want InvalidInput on %s saying %q",
					tc.args, out, err, fault.KindOf(err), fault.FieldOf(err), tc.field, tc.says)
			}
		})
	}
}

// dashPolyglot is a file that Sniff takes for MP4 ("ftyp" at byte 4) and ffmpeg's probe for a DASH
// manifest: "<MPD" may stand anywhere in the first bytes, and the "jp2 " brand drops the MP4 probe's
// score to 5 (https://ffmpeg.org/ffmpeg-formats.html#dash). Its one segment is base.
func dashPolyglot(base string) []byte {
	return []byte(`<!--ftypjp2 -->
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011" type="static" mediaPresentationDuration="PT1S" minBufferTime="PT1S">
<Period><AdaptationSet mimeType="video/mp4"><Representation id="v" bandwidth="1000">
<BaseURL>` + base + `</BaseURL>
</Representation></AdaptationSet></Period></MPD>
`)
}

// TestToolCallPolyglotOpensNothing sends, as an ordinary input, a DASH manifest that passes the
// sniffer as MP4 and names a segment outside the work directory: a clip elsewhere on disk (the
// machine's ffmpeg, run plainly, follows it and decodes the clip: checked first), or a URL of a
// loopback server. ffmpeg, run by the provider, refuses the dash demuxer (the -format_whitelist
// sinew puts before each -i) and opens neither.
func TestToolCallPolyglotOpensNothing(t *testing.T) {
	needFFmpeg(t)
	outside := filepath.Join(t.TempDir(), "elsewhere.mp4")
	if err := os.WriteFile(outside, clip(t), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := t.TempDir()
	if err := os.WriteFile(filepath.Join(plain, "in.mp4"), dashPolyglot("file:"+outside), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-i", "in.mp4", "-frames:v", "1", "out.png")
	cmd.Dir = plain
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run plainly, ffmpeg did not follow the manifest to the clip (so this test would prove nothing): %v %s", err, b)
	}
	hits := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits <- r.URL.Path }))
	defer srv.Close()
	for _, tc := range []struct{ name, base string }{{"file outside", "file:" + outside}, {"http on loopback", srv.URL + "/segment.mp4"}} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := callTool(t, []string{"-i", "in.mp4", "-frames:v", "1", "out.png"}, dashPolyglot(tc.base))
			if !fault.Is(err, fault.Provider) || !strings.Contains(fault.Message(err), "not on whitelist") {
				t.Fatalf("out %v, err = %v (kind %s); want ffmpeg to refuse the dash demuxer", out, err, fault.KindOf(err))
			}
		})
	}
	select {
	case path := <-hits:
		t.Fatalf("the loopback server was asked for %s", path)
	default:
	}
}
