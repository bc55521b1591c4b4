// Package ffmpeg is the ffmpeg integration, after Julep's
// (https://github.com/julep-ai/julep/blob/28a2bb22f6b69232f98dede2ee4109f2fde1d927/integrations-service/integrations/utils/integrations/ffmpeg.py).
// Its method keeps Julep's name, bash_cmd, so stored tools still resolve, but it is not a shell
// command.
//
// Julep takes a command string, rewrites it (every token after -i becomes pipe:0, the last token a
// temp path) and runs it with create_subprocess_shell: whoever writes the arguments runs any shell
// command on the service host. sinew takes an argument vector (args, the words after "ffmpeg") and
// runs the ffmpeg binary itself with exec, never a shell; Julep's cmd field is refused with a
// message saying so.
//
// ffmpeg follows paths and URLs it finds inside the files it reads (a concat list, an HLS playlist,
// a subtitle file), and an input can be two formats at once (the first bytes an MP4 "ftyp" box to
// a sniffer, the first line a comment to the concat demuxer), so no check of the arguments alone
// can keep it in its directory. Three layers do:
//
//   - an allow-list, not a deny-list (allow.go): only the everyday options, with their values
//     checked; only filters that read nothing but their input streams (movie, amovie, subtitles,
//     sendcmd and the like are refused; so are filter options named like files); inputs opened
//     only by the demuxers of the media Sniff accepts, with -protocol_whitelist file and
//     -format_whitelist before each -i; outputs only plain names with a media extension, written
//     by single-file muxers; encoders from a list. Nothing can open a second input.
//   - the sandbox (internal/sandbox): ffmpeg runs with an empty environment, and under Landlock
//     where the kernel has it, reading and writing only its work directory, reading only the
//     system's program and library directories, with no socket at all (seccomp), so no network;
//     this process is marked non-dumpable so its /proc/<pid>/environ is closed to other non-root
//     processes even without Landlock.
//   - bounds: time (context), input size, output size (-fs on the output, and a watchdog on
//     everything written in the directory), and stderr kept only as a bounded tail.
//
// In AWS the process that runs ffmpeg should moreover hold no credential worth stealing: the
// integration function's role reads every developer's agents, setup and secrets and decrypts with
// the secrets key. The design is a separate media function (same handler code, built with this
// package only) whose execution role has only CloudWatch Logs permissions: no table, no KMS key,
// no secrets. The integration function resolves the call (setup, secrets, inputs) and invokes the
// media function synchronously with just the argument vector and the decoded files; the media
// function answers the output file. Where Lambda's kernel lacks Landlock (a warning is logged once),
// the allow-list and the empty environment stand alone, and the function's own credentials are
// worthless to whoever gets past them.
//
// In AWS the binary comes from a Lambda layer
// (https://docs.aws.amazon.com/lambda/latest/dg/chapter-layers.html): SINEW_FFMPEG_PATH names it,
// else ffmpeg is looked up on PATH (a layer's bin/ is /opt/bin, on Lambda's PATH).
package ffmpeg

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"mime"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"sinew/internal/fault"
	"sinew/internal/sandbox"
)

// EnvPath names the ffmpeg binary; when unset, ffmpeg is looked up on PATH.
const EnvPath = "SINEW_FFMPEG_PATH"

// Files is Julep's file argument: one base64 string or a list of them.
type Files []string

// UnmarshalJSON accepts a string or an array of strings.
func (f *Files) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*f = Files{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fault.Invalid("file", "file must be a base64 string or an array of them")
	}
	*f = many
	return nil
}

// BashCmdArguments are bash_cmd's arguments.
type BashCmdArguments struct {
	// Args is required, by Plan rather than the schema, so that a call made Julep's way ({cmd, file})
	// gets Plan's message on cmd instead of "args is required".
	Args []string `json:"args,omitempty" jsonschema_description:"required: ffmpeg's arguments, one word each, without the leading ffmpeg and without shell quoting; the k-th -i NAME reads the k-th file, saved as NAME; the last argument is the output file name"`
	File Files    `json:"file,omitempty"`
	// Cmd is Julep's shell command string; it is refused (see the package comment).
	Cmd string `json:"cmd,omitempty" jsonschema_description:"not supported: sinew runs no shell; give args instead"`
}

// BashCmdOutput is bash_cmd's result, Julep's shape: the output file in base64, true, and its MIME
// type. Failures are typed errors, not result:false.
type BashCmdOutput struct {
	FileOutput string `json:"fileoutput"`
	Result     bool   `json:"result"`
	MimeType   string `json:"mime_type"`
}

// Env is what the provider takes from its surroundings.
type Env struct {
	// Path is the ffmpeg binary; empty means SINEW_FFMPEG_PATH, then PATH.
	Path string
	// Timeout bounds one run (default 120 s).
	Timeout time.Duration
	// MaxInputBytes bounds the decoded inputs together (default 64 MiB).
	MaxInputBytes int64
	// MaxOutputBytes bounds the output file (default 32 MiB).
	MaxOutputBytes int64
	// TempDir is where working directories are made (default os.TempDir()).
	TempDir string
	Log     *slog.Logger
}

const (
	defaultTimeout   = 120 * time.Second
	defaultMaxInput  = 64 << 20
	defaultMaxOutput = 32 << 20
	maxArgs          = 256
	maxArgLen        = 4096
	stderrTail       = 4096
)

// BashCmd runs ffmpeg once and returns its output file.
func BashCmd(ctx context.Context, env Env, args BashCmdArguments) (BashCmdOutput, error) {
	plan, err := Plan(args)
	if err != nil {
		return BashCmdOutput{}, err
	}
	maxIn := orDefault(env.MaxInputBytes, defaultMaxInput)
	maxOut := orDefault(env.MaxOutputBytes, defaultMaxOutput)
	inputs := make([][]byte, len(args.File))
	var total int64
	for i, f := range args.File {
		// The decoded size is known from the encoded length: refuse before decoding a huge value.
		if total+int64(base64.StdEncoding.DecodedLen(len(f))) > maxIn+3 {
			return BashCmdOutput{}, fault.New(fault.TooLarge, "the input files are over %d bytes together", maxIn)
		}
		b, err := decodeBase64(f)
		if err != nil {
			return BashCmdOutput{}, fault.Invalid(fmt.Sprintf("file[%d]", i), "file[%d] is not valid base64", i)
		}
		total += int64(len(b))
		if total > maxIn {
			return BashCmdOutput{}, fault.New(fault.TooLarge, "the input files are over %d bytes together", maxIn)
		}
		if Sniff(b) == "" {
			return BashCmdOutput{}, fault.Invalid(fmt.Sprintf("file[%d]", i), "file[%d] is not a supported media format (mp4, webm, avi, wmv, mp3, wav, ogg, flac, jpeg, png, gif, tiff, bmp)", i)
		}
		inputs[i] = b
	}
	bin, err := binary(env.Path)
	if err != nil {
		return BashCmdOutput{}, err
	}

	dir, err := os.MkdirTemp(env.TempDir, "sinew-ffmpeg-")
	if err != nil {
		return BashCmdOutput{}, fault.Wrap(fault.Internal, err, "making a working directory for ffmpeg")
	}
	defer os.RemoveAll(dir)
	for i, name := range plan.Inputs {
		if err := os.WriteFile(filepath.Join(dir, name), inputs[i], 0o600); err != nil {
			return BashCmdOutput{}, fault.Wrap(fault.Internal, err, "writing input %d", i)
		}
	}

	timeout := env.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd, err := confined(runCtx, bin, dir, plan.Argv(maxOut), env.logger())
	if err != nil {
		return BashCmdOutput{}, err
	}
	tail := &tailBuffer{max: stderrTail}
	cmd.Stderr = tail
	cmd.Stdout = tail
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return BashCmdOutput{}, fault.Wrap(fault.Internal, err, "starting ffmpeg")
	}
	// -fs bounds the named output only; a watchdog bounds everything ffmpeg writes in its directory
	// (extra outputs, logs), so no run can fill the disk.
	overflow := make(chan struct{})
	go watchDir(runCtx, dir, total+maxOut, overflow, cancel)
	runErr := cmd.Wait()
	log := env.logger()
	select {
	case <-overflow:
		return BashCmdOutput{}, fault.New(fault.TooLarge, "ffmpeg wrote past the %d-byte bound into its working directory; it was stopped", maxOut)
	default:
	}
	if runErr != nil {
		if runCtx.Err() != nil {
			if ctx.Err() != nil {
				return BashCmdOutput{}, fault.Wrap(fault.Timeout, ctx.Err(), "the call ran out of time while ffmpeg ran")
			}
			return BashCmdOutput{}, fault.Wrap(fault.Timeout, runErr, "ffmpeg did not finish within %s", timeout)
		}
		log.InfoContext(ctx, "ffmpeg failed", "exit", cmd.ProcessState.ExitCode(), "elapsed", time.Since(start))
		return BashCmdOutput{}, fault.Wrap(fault.Provider, runErr, "ffmpeg failed (exit %d): %s", cmd.ProcessState.ExitCode(), lastLines(tail.String(), 500))
	}
	outPath := filepath.Join(dir, plan.Output)
	st, err := os.Stat(outPath)
	if err != nil {
		return BashCmdOutput{}, fault.Wrap(fault.Provider, err, "ffmpeg wrote no output file %q: %s", plan.Output, lastLines(tail.String(), 300))
	}
	if st.Size() >= maxOut {
		return BashCmdOutput{}, fault.New(fault.TooLarge, "the output file reached the %d-byte bound; ffmpeg stopped writing it", maxOut)
	}
	out, err := os.ReadFile(outPath)
	if err != nil {
		return BashCmdOutput{}, fault.Wrap(fault.Internal, err, "reading the output file")
	}
	log.InfoContext(ctx, "ffmpeg ran", "inputs", len(inputs), "input_bytes", total, "output_bytes", len(out), "elapsed", time.Since(start))
	return BashCmdOutput{FileOutput: base64.StdEncoding.EncodeToString(out), Result: true, MimeType: mimeType(plan.Output, out)}, nil
}

// watchDir sums the sizes of the files in dir every 100 ms until ctx ends, and when the sum passes
// limit, closes overflow and stops the run.
func watchDir(ctx context.Context, dir string, limit int64, overflow chan<- struct{}, stop context.CancelFunc) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var sum int64
		_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if info, err := d.Info(); err == nil {
					sum += info.Size()
				}
			}
			return nil
		})
		if sum > limit {
			close(overflow)
			stop()
			return
		}
	}
}

// Sniff names the media type of b by its magic bytes (Julep's list), or "" when it is none of them.
func Sniff(b []byte) string {
	has := func(off int, sig string) bool { return len(b) >= off+len(sig) && string(b[off:off+len(sig)]) == sig }
	switch {
	case has(4, "ftyp"):
		return "video/mp4"
	case has(0, "\x1a\x45\xdf\xa3"):
		return "video/webm"
	case has(0, "RIFF") && has(8, "AVI "):
		return "video/x-msvideo"
	case has(0, "RIFF") && has(8, "WAVE"):
		return "audio/wav"
	case has(0, "\x30\x26\xb2\x75\x8e\x66\xcf\x11"):
		return "video/x-ms-wmv"
	case has(0, "ID3") || (len(b) > 1 && b[0] == 0xff && b[1]&0xe0 == 0xe0 && b[1]&0x06 != 0):
		return "audio/mpeg"
	case has(0, "OggS"):
		return "audio/ogg"
	case has(0, "fLaC"):
		return "audio/flac"
	case has(0, "\xff\xd8\xff"):
		return "image/jpeg"
	case has(0, "\x89PNG\r\n\x1a\n"):
		return "image/png"
	case has(0, "GIF87a") || has(0, "GIF89a"):
		return "image/gif"
	case has(0, "II*\x00") || has(0, "MM\x00*"):
		return "image/tiff"
	case has(0, "BM"):
		return "image/bmp"
	}
	return ""
}

var extTypes = map[string]string{
	".mp4": "video/mp4", ".m4a": "audio/mp4", ".mov": "video/quicktime", ".webm": "video/webm", ".mkv": "video/x-matroska",
	".avi": "video/x-msvideo", ".wmv": "video/x-ms-wmv", ".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg",
	".oga": "audio/ogg", ".flac": "audio/flac", ".aac": "audio/aac", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".png": "image/png", ".gif": "image/gif", ".tif": "image/tiff", ".tiff": "image/tiff", ".bmp": "image/bmp",
	".webp": "image/webp", ".ts": "video/mp2t", ".srt": "application/x-subrip", ".vtt": "text/vtt",
}

func mimeType(name string, b []byte) string {
	ext := strings.ToLower(filepath.Ext(name))
	if t, ok := extTypes[ext]; ok {
		return t
	}
	if t := Sniff(b); t != "" {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

func (e Env) logger() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.Default()
}

var noLandlock sync.Once

// confined is the command that runs ffmpeg with argv in dir, through the sandbox: an empty
// environment but for what ffmpeg needs, Landlock where the kernel has it (dir read-write, the
// system's and the binary's directories read-only, nothing else), its own process group, killed
// whole when ctx ends. The service itself is made non-dumpable first, so that even without
// Landlock a process of the same (non-root) user cannot read its /proc/<pid>/environ.
func confined(ctx context.Context, bin, dir string, argv []string, log *slog.Logger) (*exec.Cmd, error) {
	if err := sandbox.SetParentUndumpable(); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "hardening the process before running ffmpeg")
	}
	if sandbox.Available() == 0 {
		noLandlock.Do(func() {
			log.WarnContext(ctx, "this kernel has no Landlock: ffmpeg runs with an empty environment and the option allow-list, but may read any file this process can")
		})
	}
	binDir := filepath.Dir(bin)
	cmd, err := sandbox.CommandContext(ctx, sandbox.Spec{Path: bin, Args: argv, Dir: dir,
		ReadDirs: []string{binDir, filepath.Join(filepath.Dir(binDir), "lib")},
		Env:      []string{"HOME=" + dir, "TMPDIR=" + dir, "XDG_CACHE_HOME=" + dir, "LC_ALL=C"}})
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "preparing ffmpeg's sandbox")
	}
	cmd.Stdin = nil
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	return cmd, nil
}

func binary(path string) (string, error) {
	if path == "" {
		path = os.Getenv(EnvPath)
	}
	if path != "" {
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			return "", fault.New(fault.Internal, "the ffmpeg binary %s (from %s) is missing; deploy the ffmpeg layer or fix the setting", path, EnvPath)
		}
		return path, nil
	}
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		return "", fault.New(fault.Internal, "ffmpeg is not installed: set %s or add the ffmpeg layer", EnvPath)
	}
	return p, nil
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ";base64,"); i >= 0 && strings.HasPrefix(s, "data:") {
		s = s[i+len(";base64,"):] // a data: URL is a common way to send a file
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}

func orDefault(v, d int64) int64 {
	if v > 0 {
		return v
	}
	return d
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(bytes.ToValidUTF8(t.buf, nil)) }

// lastLines gives the end of ffmpeg's log, at most max bytes, on one line.
func lastLines(s string, max int) string {
	s = strings.TrimSpace(s)
	if len(s) > max {
		s = "…" + s[len(s)-max:]
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
}
