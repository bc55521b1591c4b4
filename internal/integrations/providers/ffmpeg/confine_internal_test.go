package ffmpeg

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sinew/internal/sandbox"
)

// TestSandboxAloneStopsTheFileRead runs the polyglot attack with the argument checks bypassed (Plan
// would refuse amovie): ffmpeg, confined, follows the concat list and the playlist as far as it
// likes, but the file outside its work directory cannot be opened, and nothing of it comes back.
// Without the sandbox the same argv copies the file (checked first, so the test proves something).
func TestSandboxAloneStopsTheFileRead(t *testing.T) {
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal("ffmpeg is not installed: run `scripts/apt.sh ffmpeg` (as make test does)")
	}
	if sandbox.Available() == 0 {
		t.Fatal("this kernel has no Landlock (Linux 5.13+ with landlock in its lsm= list): the layer under test is absent")
	}
	secretPath := filepath.Join(t.TempDir(), "secret.pem")
	const secret = "THE-SERVICE-SIGNING-KEY-0123456789"
	if err := os.WriteFile(secretPath, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	playlist := "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-VERSION:4\n#EXTINF:1,\n#EXT-X-BYTERANGE:1@0\nfile:in.ub\n#EXTINF:1,\nfile:" + secretPath + "\n#EXT-X-ENDLIST\n"
	poly := "#   ftypisom\nffconcat version 1.0\nfile 'data:application/vnd.apple.mpegurl;base64," + base64.StdEncoding.EncodeToString([]byte(playlist)) +
		"'\noption allowed_extensions ALL\noption allowed_segment_extensions ALL\noption extension_picky 0\n"
	argv := Run{Args: []string{"-f", "image2", "-i", "in.ub", "-filter_complex", `amovie=in.ub:format_opts=safe\=0:f=concat`, "-c:a", "pcm_u8", "out.wav"}}.Argv(1 << 20)

	run := func(t *testing.T, confine bool) (out []byte, log string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "in.ub"), []byte(poly), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, argv...)
		if confine {
			if cmd, err = confined(context.Background(), bin, dir, argv, slog.Default()); err != nil {
				t.Fatal(err)
			}
		}
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		_ = cmd.Run() // the confined run may well succeed: HLS skips a segment it cannot open
		out, _ = os.ReadFile(filepath.Join(dir, "out.wav"))
		return out, stderr.String()
	}
	if out, log := run(t, false); !bytes.Contains(out, []byte(secret)) {
		t.Fatalf("unconfined, the attack did not copy the file (so this test would prove nothing); ffmpeg said %s", log)
	}
	out, log := run(t, true)
	if bytes.Contains(out, []byte(secret)) || strings.Contains(log, secret) {
		t.Fatalf("confined, ffmpeg still copied the file outside its directory")
	}
}
