package ffmpeg

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sinew/internal/sandbox"
)

// TestSandboxAloneStopsTheFileRead runs the polyglot attack with the argument checks bypassed (Plan
// would refuse amovie): ffmpeg, confined, follows the concat list and the playlist as far as it
// likes, but the file outside its work directory cannot be opened, and nothing of it comes back.
// Without the sandbox the same argv copies the file (checked first, so the test proves something).
func TestSandboxAloneStopsTheFileRead(t *testing.T) {
	bin := confinedFFmpeg(t)
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
			var err error
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

// confinedFFmpeg is the machine's ffmpeg, failing the test when it is missing or when this kernel
// has no Landlock: the confinement under test would be absent.
func confinedFFmpeg(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal("ffmpeg is not installed: `make deps` installs it")
	}
	if sandbox.Available() == 0 {
		t.Fatal("this kernel has no Landlock (Linux 5.13+ with landlock in its lsm= list): the layer under test is absent")
	}
	return bin
}

// TestRunningFFmpegIsConfined looks at ffmpeg while it runs as the provider runs it. Its first
// input is a FIFO in its work directory, so it waits there: its /proc status says no_new_privs, and
// its environment is the provider's four variables and nothing of this process's. Then it is fed a
// WAV through the FIFO, and goes on to its second input, a file outside the work directory that this
// process can read: Landlock refuses it (Linux exposes no Landlock line in /proc/<pid>/status, so
// the refused open is the proof).
func TestRunningFFmpegIsConfined(t *testing.T) {
	bin := confinedFFmpeg(t)
	t.Setenv("SINEW_CONFINE_TEST_SECRET", "canary-9931")
	dir := t.TempDir()
	if err := unix.Mkfifo(filepath.Join(dir, "live.wav"), 0o600); err != nil {
		t.Fatal(err)
	}
	tone := filepath.Join(t.TempDir(), "tone.wav")
	if b, err := exec.Command(bin, "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "sine=d=0.2", tone).CombinedOutput(); err != nil {
		t.Fatalf("making the tone: %v %s", err, b)
	}
	wav, err := os.ReadFile(tone) // readable here: a refusal below is the sandbox's
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	argv := Run{Args: []string{"-i", "live.wav", "-i", tone, "-filter_complex", "amix=inputs=2", "out.wav"}}.Argv(1 << 20)
	cmd, err := confined(ctx, bin, dir, argv, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	proc := fmt.Sprintf("/proc/%d/", cmd.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if comm, _ := os.ReadFile(proc + "comm"); string(comm) == "ffmpeg\n" {
			break // the helper has exec'd ffmpeg
		}
		if time.Now().After(deadline) {
			t.Fatalf("ffmpeg did not start: %s", stderr.String())
		}
	}
	status, err := os.ReadFile(proc + "status")
	if _, rest, _ := strings.Cut(string(status), "\nNoNewPrivs:"); err != nil || !strings.HasPrefix(rest, "\t1\n") {
		t.Errorf("the running ffmpeg's status says NoNewPrivs:%.3q (%v), want NoNewPrivs:\t1", rest, err)
	}
	environ, err := os.ReadFile(proc + "environ")
	if want := "HOME=" + dir + "\x00TMPDIR=" + dir + "\x00XDG_CACHE_HOME=" + dir + "\x00LC_ALL=C\x00"; err != nil || string(environ) != want {
		t.Errorf("the running ffmpeg's environment is %q (%v), want %q", environ, err, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "live.wav"), wav, 0o600); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	log := stderr.String()
	if err == nil || !strings.Contains(log, tone+": Permission denied") || strings.Contains(log, "live.wav") {
		t.Fatalf("ffmpeg exited with %v, saying %q; want the outside file refused with Permission denied after the FIFO was read", err, log)
	}
}
