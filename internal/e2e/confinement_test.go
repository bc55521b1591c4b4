package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sinew/internal/localaws/jwtlocal"
)

// polyglot is one file that is an MP4 to a magic-byte sniffer ("ftyp" at bytes 4-8) and a concat
// list to ffmpeg (its first line is a # comment). The list names a data: HLS playlist, with the
// demuxer options that lift HLS's extension checks; the playlist's first segment is one byte of
// this file (so the probe picks the raw u8 demuxer by its name's extension, .ub) and its second
// is target: the output then holds target's bytes as 8-bit PCM samples.
func polyglot(name, target string) []byte {
	playlist := "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-VERSION:4\n#EXTINF:1,\n#EXT-X-BYTERANGE:1@0\nfile:" + name +
		"\n#EXTINF:1,\nfile:" + target + "\n#EXT-X-ENDLIST\n"
	return []byte("#   ftypisom this line is a comment to the concat demuxer\nffconcat version 1.0\n" +
		"file 'data:application/vnd.apple.mpegurl;base64," + base64.StdEncoding.EncodeToString([]byte(playlist)) + "'\n" +
		"option allowed_extensions ALL\noption allowed_segment_extensions ALL\noption extension_picky 0\n")
}

// TestFFmpegReadsNoFileOfTheService attacks through local mode's public API as any developer
// can: an ffmpeg integration tool called with POST /tool-calls on the polyglot above, opened once
// as an -i input and again by the amovie filter as a concat list (safe=0 through format_opts), so
// that ffmpeg follows the playlist to a file of the service. Whatever the call answers (an output
// file, an error message with ffmpeg's log), none of the file may be in it: not /etc/passwd, not
// local mode's JWT signing key (with which any developer's token could be forged), not local
// mode's own environment through /proc/<pid>/environ.
func TestFFmpegReadsNoFileOfTheService(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	const canary = "sinew-canary-7f3a9c1e5b"
	p := startLocal(t, dir, []string{"SINEW_CONFINEMENT_CANARY=" + canary})
	dev := p.apiFor(t, "dev-media-attacker")
	agent := dev.must(t, "POST", "/agents", map[string]any{"name": "media", "about": "runs ffmpeg"}, 201)["id"].(string)
	dev.must(t, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "media", "type": "integration",
		"integration": map[string]any{"provider": "ffmpeg", "method": "bash_cmd"}}, 201)

	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, jwtlocal.KeyFileName)
	key, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, target string
		secret       string // a piece of the target that must not come back
	}{
		{"/etc/passwd", "/etc/passwd", strings.SplitN(string(passwd), "\n", 2)[0]},
		{"the JWT signing key", keyPath, pemBody(t, key)},
		{"local mode's environment", fmt.Sprintf("/proc/%d/environ", p.Cmd.Process.Pid), "SINEW_CONFINEMENT_CANARY=" + canary},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const in = "in.ub"
			args := map[string]any{
				"args": []string{"-f", "image2", "-i", in, "-filter_complex", `amovie=` + in + `:format_opts=safe\=0:f=concat`, "-c:a", "pcm_u8", "out.wav"},
				"file": base64.StdEncoding.EncodeToString(polyglot(in, tc.target)),
			}
			st := dev.startAsync(t, map[string]any{"agent_id": agent, "task_id": nil, "session_id": nil, "tool": "media", "arguments": args})
			x, raw := dev.awaitFinal(t, st["execution_id"].(string))
			seen := raw
			if out := dev.resultOf(t, x); out != nil {
				if b64, _ := out["fileoutput"].(string); b64 != "" {
					b, err := base64.StdEncoding.DecodeString(b64)
					if err != nil {
						t.Fatalf("fileoutput is not base64: %v", err)
					}
					seen += string(b)
				}
			}
			if strings.Contains(seen, tc.secret) {
				t.Fatalf("the call's answer holds %s (%q): ffmpeg read a file outside its working directory", tc.target, tc.secret)
			}
			// The way in is closed with a clear refusal, before ffmpeg runs.
			e, _ := x["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if x["status"] != "failed" || !strings.Contains(msg, "amovie") {
				t.Errorf("execution = %s, want failed with a message that names the refused amovie filter", raw)
			}
		})
	}
}

// pemBody is the first base64 line of a PEM file: a piece of the key that any copy would hold.
func pemBody(t *testing.T, pem []byte) string {
	t.Helper()
	for _, l := range strings.Split(string(pem), "\n") {
		if l != "" && !strings.HasPrefix(l, "-----") {
			return l
		}
	}
	t.Fatalf("no body in the PEM file %q", pem)
	return ""
}

// awaitFinal polls GET /executions/{id} until the execution ends and answers it and its raw JSON.
func (a *api) awaitFinal(t *testing.T, id string) (map[string]any, string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a guard against a hang only
	for {
		x := a.must(t, "GET", "/executions/"+id, nil, 200)
		switch x["status"] {
		case "succeeded", "failed", "timed_out", "cancelled":
			raw, _ := json.Marshal(x)
			return x, string(raw)
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s still %v after 2 minutes", id, x["status"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// resultOf is an execution's tool output object, read through GET /payloads when it travelled as
// a reference; nil when there is none.
func (a *api) resultOf(t *testing.T, x map[string]any) map[string]any {
	t.Helper()
	res, _ := x["output"].(map[string]any)
	if ref, ok := res["sinew:ref"].(string); ok {
		res = a.must(t, "GET", "/payloads/"+url.PathEscape(ref), nil, 200)
	}
	out, _ := res["output"].(map[string]any)
	return out
}

// needFFmpeg fails with how to install ffmpeg when it is missing.
func needFFmpeg(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatal("ffmpeg is not installed: run `scripts/apt.sh ffmpeg` (as make test does)")
	}
}
