// Package ffmpeg is the ffmpeg integration. Its method keeps Julep's name,
// bash_cmd, so stored tools still resolve, but it is not a shell command.
//
// Julep takes a command string, rewrites it (every token after -i becomes pipe:0, the last token a
// temp path) and runs it with create_subprocess_shell: whoever writes the arguments runs any shell
// command on the service host. sinew takes an argument vector (args, the words after "ffmpeg") and
// runs the ffmpeg binary itself with exec, never a shell, so ;, |, $(...) and > mean nothing, and a
// stand-alone shell operator is refused rather than passed on as a file name. Julep's cmd field is
// refused with a message saying so.
//
// The run is confined: inputs (file, base64) are written into a fresh temporary working directory
// under the names the -i options give, in order; the last argument names the one output file, also
// in that directory, which comes back base64. Every argument is checked before anything runs: no
// absolute path, no "..", no protocol (http:, concat:, file:, pipe:, ... anywhere in an argument,
// filter options included, since ffmpeg's filters open URLs), no option that reads arguments or
// scripts from files or loosens sinew's own limits. Each input is opened with a protocol whitelist of
// "file" and a demuxer whitelist of the media formats sniffed here (no playlists, concat scripts or
// lavfi). Time (context), input size and output size (-fs on the output, and a watchdog on
// everything written in the directory) are bounded, and stderr is kept only as a bounded tail for
// the error message. In AWS the binary comes from a Lambda layer (the stack's ffmpeg layer setting, infra/cdk/README.md);
// SINEW_FFMPEG_PATH names it, else ffmpeg is looked up on PATH (a layer's bin/ is /opt/bin, on
// Lambda's PATH).
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/ffmpeg.py
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
	"regexp"
	"strings"
	"syscall"
	"time"

	"sinew/internal/fault"
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
	Args []string `json:"args" jsonschema_description:"ffmpeg's arguments, one word each, without the leading ffmpeg and without shell quoting; the k-th -i NAME reads the k-th file, saved as NAME; the last argument is the output file name"`
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
	argv := plan.Argv(maxOut)
	cmd := exec.CommandContext(runCtx, bin, argv...)
	cmd.Dir = dir
	// A minimal environment: nothing of the executor's (credentials included) reaches ffmpeg.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir, "LC_ALL=C"}
	cmd.Stdin = nil
	tail := &tailBuffer{max: stderrTail}
	cmd.Stderr = tail
	cmd.Stdout = tail
	// Its own process group, so a kill on timeout reaches anything it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return BashCmdOutput{}, fault.Wrap(fault.Internal, err, "starting ffmpeg")
	}
	// -fs bounds the named output only; a watchdog bounds everything ffmpeg writes in its directory
	// (extra outputs, logs), so no run can fill the disk.
	overflow := make(chan struct{})
	go watchDir(runCtx, dir, total+maxOut, overflow, cancel)
	runErr := cmd.Wait()
	log := env.Log
	if log == nil {
		log = slog.Default()
	}
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

// Run is a checked argument vector: the input names in -i order, the output name, and the words.
type Run struct {
	Args   []string
	Inputs []string
	Output string
}

// inputFormats are the demuxers an input may be opened with: the media sniffed by Sniff, and never a
// playlist, concat script, lavfi graph or device.
const inputFormats = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,avi,asf,mp3,wav,ogg,flac,image2,png_pipe,jpeg_pipe,gif,gif_pipe,tiff_pipe,bmp_pipe"

// Argv is the vector ffmpeg runs with: sinew's fixed options, each -i preceded by the whitelists,
// and the output preceded by its size bound.
func (r Run) Argv(maxOut int64) []string {
	// Errors only, no progress lines: the log's tail is what an error message shows.
	argv := []string{"-nostdin", "-hide_banner", "-nostats", "-loglevel", "error", "-y"}
	last := len(r.Args) - 1
	for i, a := range r.Args {
		if a == "-i" {
			argv = append(argv, "-protocol_whitelist", "file", "-format_whitelist", inputFormats)
		}
		if i == last {
			argv = append(argv, "-fs", fmt.Sprint(maxOut))
		}
		argv = append(argv, a)
	}
	return argv
}

// Plan checks the arguments and finds the inputs and the output, or says which argument breaks
// which rule.
func Plan(args BashCmdArguments) (Run, error) {
	if args.Cmd != "" {
		return Run{}, fault.Invalid("cmd", "cmd is a shell command, and sinew runs no shell: give the words after ffmpeg as args, e.g. [\"-i\", \"in.mp4\", \"-vf\", \"scale=320:-1\", \"out.mp4\"]")
	}
	words := args.Args
	if len(words) > 0 && (words[0] == "ffmpeg" || strings.HasSuffix(words[0], "/ffmpeg")) {
		words = words[1:] // a leading program name is a harmless habit
	}
	if len(words) == 0 {
		return Run{}, fault.Invalid("args", "args is required: ffmpeg's arguments, ending with the output file name")
	}
	if len(words) > maxArgs {
		return Run{}, fault.Invalid("args", "args may have at most %d words", maxArgs)
	}
	r := Run{Args: words}
	for i := 0; i < len(words); i++ {
		w := words[i]
		field := fmt.Sprintf("args[%d]", i)
		if err := checkWord(field, w); err != nil {
			return Run{}, err
		}
		if strings.HasPrefix(w, "-") {
			if err := checkOption(field, w); err != nil {
				return Run{}, err
			}
		}
		if w == "-i" {
			if i+1 >= len(words)-1 {
				return Run{}, fault.Invalid(field, "%s: -i needs an input file name, and the output file name must come last", field)
			}
			name := words[i+1]
			if err := checkName(fmt.Sprintf("args[%d]", i+1), name); err != nil {
				return Run{}, err
			}
			for _, n := range r.Inputs {
				if n == name {
					return Run{}, fault.Invalid(fmt.Sprintf("args[%d]", i+1), "args[%d]: input name %q is used twice", i+1, name)
				}
			}
			r.Inputs = append(r.Inputs, name)
			i++
		}
	}
	r.Output = words[len(words)-1]
	outField := fmt.Sprintf("args[%d]", len(words)-1)
	if err := checkName(outField, r.Output); err != nil {
		return Run{}, fault.Invalid(outField, "the last argument is the output file: %s", fault.Message(err))
	}
	for _, n := range r.Inputs {
		if n == r.Output {
			return Run{}, fault.Invalid(outField, "%s: the output file %q is also an input", outField, n)
		}
	}
	if len(r.Inputs) != len(args.File) {
		return Run{}, fault.Invalid("file", "file has %d item(s) but args has %d -i option(s): give one file per -i, in order", len(args.File), len(r.Inputs))
	}
	return r, nil
}

var (
	// nameRE is a plain file name in the working directory: no directory, no protocol.
	nameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}$`)
	// protoRE finds "name:" where name is one of ffmpeg's protocols, at a word start in any
	// argument (filter options too: movie=http\://... opens a URL). Backslashes and quotes are
	// removed before matching, since filtergraphs use them to escape.
	protoRE = regexp.MustCompile(`(?i)(^|[^a-z0-9_])(async|bluray|cache|concat|concatf|crypto|data|fd|ffrtmpcrypt|ffrtmphttp|file|ftp|gopher|gophers|hls|http|httpproxy|https|icecast|ipfs|ipns|md5|mmsh|mmst|pipe|prompeg|rist|rtmp|rtmpe|rtmps|rtmpt|rtmpte|rtmpts|rtp|rtsp|sctp|sftp|smb|srt|srtp|subfile|tcp|tee|tls|udp|udplite|unix|zmq|amqp|dav|davs|ws|wss|libssh|librtmp|android_content)\s*:`)
	// pathSep splits an argument into the places a path could start in ffmpeg's syntaxes (option
	// values, filter options, stream specifiers); not at "(", where "(w-tw)/2" is a division.
	pathSep = regexp.MustCompile(`[=:,;\[\]|'"\s]`)
	// shellOps are words that only mean something to a shell.
	shellOps = map[string]bool{"|": true, "||": true, "&&": true, "&": true, ";": true, ">": true, ">>": true, "<": true, "<<": true, "2>": true, "2>&1": true, "&>": true}
	// refusedOptions read scripts or arguments from files, or would loosen sinew's own limits.
	refusedOptions = map[string]string{
		"-protocol_whitelist": "sinew sets it", "-protocol_blacklist": "sinew sets the whitelist",
		"-format_whitelist": "sinew sets it", "-codec_whitelist": "sinew sets the limits",
		"-fs": "sinew bounds the output size", "-filter_script": "it reads a file", "-filter_complex_script": "it reads a file",
		"-safe": "it lets the concat demuxer open any path", "-attach": "it reads a file", "-dump_attachment": "it writes files",
		"-report": "it writes a log file", "-vstats_file": "it writes a file", "-sdp_file": "it writes a file",
		"-progress":       "it opens a URL",
		"-init_hw_device": "no devices are available", "-hwaccel_device": "no devices are available",
	}
)

func checkWord(field, w string) error {
	if len(w) > maxArgLen {
		return fault.Invalid(field, "%s is longer than %d bytes", field, maxArgLen)
	}
	if strings.ContainsRune(w, 0) {
		return fault.Invalid(field, "%s contains a NUL byte", field)
	}
	if shellOps[w] {
		return fault.Invalid(field, "%s is the shell operator %q; sinew runs ffmpeg without a shell, so pipes, redirections and command lists are not available", field, w)
	}
	if strings.Contains(w, "$(") || strings.Contains(w, "`") {
		return fault.Invalid(field, "%s holds shell command substitution; sinew runs no shell", field)
	}
	plain := strings.NewReplacer(`\`, "", `'`, "", `"`, "").Replace(w)
	if m := protoRE.FindStringSubmatch(plain); m != nil {
		return fault.Invalid(field, "%s names the %s: protocol; ffmpeg may read and write only the files in its working directory", field, strings.ToLower(m[2]))
	}
	if strings.Contains(plain, "//") {
		return fault.Invalid(field, "%s looks like a URL; ffmpeg may read and write only the files in its working directory", field)
	}
	for _, piece := range pathSep.Split(plain, -1) {
		if strings.HasPrefix(piece, "/") || strings.HasPrefix(piece, "~") {
			return fault.Invalid(field, "%s holds the absolute path %q; use file names in the working directory", field, piece)
		}
		for _, comp := range strings.Split(piece, "/") {
			if comp == ".." {
				return fault.Invalid(field, "%s holds %q, which reaches outside the working directory", field, "..")
			}
		}
	}
	return nil
}

func checkOption(field, w string) error {
	if strings.HasPrefix(w, "-/") {
		return fault.Invalid(field, "%s: options that read their value from a file (-/name) are not allowed", field)
	}
	name := w
	if i := strings.IndexByte(name, ':'); i > 0 {
		name = name[:i] // per-stream forms such as -fs:0 or -filter_script:v
	}
	if why, ok := refusedOptions[name]; ok {
		return fault.Invalid(field, "%s: the option %s is not allowed: %s", field, name, why)
	}
	return nil
}

func checkName(field, name string) error {
	if !nameRE.MatchString(name) || strings.Contains(name, "..") {
		return fault.Invalid(field, "%s must be a plain file name in the working directory (letters, digits, _ . -; no path, no protocol, no %%), got %q", field, name)
	}
	return nil
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
