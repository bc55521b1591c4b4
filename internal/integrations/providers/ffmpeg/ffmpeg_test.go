package ffmpeg_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sinew/internal/fault"
	"sinew/internal/integrations/providers/ffmpeg"
)

// needFFmpeg fails loudly when Debian's ffmpeg is missing: these tests run the real one.
func needFFmpeg(t testing.TB) {
	t.Helper()
	if p := os.Getenv(ffmpeg.EnvPath); p != "" {
		return
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatal("ffmpeg is not installed: `make deps` installs it")
	}
}

// wav makes a mono 16-bit PCM WAV of a 440 Hz tone.
func wav(seconds float64, rate int) []byte {
	n := int(seconds * float64(rate))
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + 2*n))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1))
	w(uint16(1))
	w(uint32(rate))
	w(uint32(2 * rate))
	w(uint16(2))
	w(uint16(16))
	b.WriteString("data")
	w(uint32(2 * n))
	for i := range n {
		w(int16(8000 * math.Sin(2*math.Pi*440*float64(i)/float64(rate))))
	}
	return b.Bytes()
}

// pngImage makes a w×h PNG in one colour.
func pngImage(t testing.TB, w, h int, c color.Color) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func decodeOut(t *testing.T, out ffmpeg.BashCmdOutput) []byte {
	t.Helper()
	if !out.Result {
		t.Fatal("result = false")
	}
	b, err := base64.StdEncoding.DecodeString(out.FileOutput)
	if err != nil {
		t.Fatalf("fileoutput is not base64: %v", err)
	}
	return b
}

func TestBashCmdRealMedia(t *testing.T) {
	needFFmpeg(t)
	red := pngImage(t, 64, 32, color.RGBA{255, 0, 0, 255})
	blue := pngImage(t, 40, 32, color.RGBA{0, 0, 255, 255})
	tone := wav(0.5, 8000)
	tests := []struct {
		name  string
		args  ffmpeg.BashCmdArguments
		mime  string
		check func(t *testing.T, out []byte)
	}{
		{"png scaled to jpeg", ffmpeg.BashCmdArguments{Args: []string{"-i", "in.png", "-vf", "scale=32:16", "out.jpg"}, File: ffmpeg.Files{b64(red)}}, "image/jpeg",
			func(t *testing.T, out []byte) {
				img, err := jpeg.Decode(bytes.NewReader(out))
				if err != nil {
					t.Fatalf("output is not a JPEG: %v", err)
				}
				if b := img.Bounds(); b.Dx() != 32 || b.Dy() != 16 {
					t.Fatalf("size %v, want 32x16", b)
				}
				r, g, bl, _ := img.At(16, 8).RGBA()
				if r>>8 < 200 || g>>8 > 60 || bl>>8 > 60 {
					t.Errorf("pixel is %d,%d,%d, want red", r>>8, g>>8, bl>>8)
				}
			}},
		{"two inputs stacked, leading ffmpeg word", ffmpeg.BashCmdArguments{Args: []string{"ffmpeg", "-i", "a.png", "-i", "b.png", "-filter_complex", "[0:v][1:v]hstack=inputs=2", "out.png"}, File: ffmpeg.Files{b64(red), b64(blue)}}, "image/png",
			func(t *testing.T, out []byte) {
				img, err := png.Decode(bytes.NewReader(out))
				if err != nil {
					t.Fatalf("output is not a PNG: %v", err)
				}
				if b := img.Bounds(); b.Dx() != 104 || b.Dy() != 32 {
					t.Fatalf("size %v, want 104x32", b)
				}
				if _, _, bl, _ := img.At(90, 10).RGBA(); bl>>8 < 200 {
					t.Errorf("the right part is not blue")
				}
			}},
		{"wav to flac, trimmed", ffmpeg.BashCmdArguments{Args: []string{"-i", "tone.wav", "-t", "0.25", "-c:a", "flac", "tone.flac"}, File: ffmpeg.Files{b64(tone)}}, "audio/flac",
			func(t *testing.T, out []byte) {
				if ffmpeg.Sniff(out) != "audio/flac" {
					t.Fatalf("output is not FLAC: % x", out[:min(8, len(out))])
				}
				// STREAMINFO's total samples (36 bits at byte 21 of the stream) say 0.25 s at 8 kHz.
				total := (uint64(out[21]&0x0f) << 32) | uint64(binary.BigEndian.Uint32(out[22:26]))
				if total != 2000 {
					t.Errorf("%d samples, want 2000", total)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ffmpeg.BashCmd(context.Background(), ffmpeg.Env{}, tc.args)
			if err != nil {
				t.Fatalf("BashCmd: %v", err)
			}
			if out.MimeType != tc.mime {
				t.Errorf("mime_type %q, want %q", out.MimeType, tc.mime)
			}
			tc.check(t, decodeOut(t, out))
		})
	}
}

func TestBashCmdFailuresAreTyped(t *testing.T) {
	needFFmpeg(t)
	tone := b64(wav(0.5, 8000))
	tests := []struct {
		name   string
		env    ffmpeg.Env
		args   ffmpeg.BashCmdArguments
		kind   fault.Kind
		substr string
	}{
		{"unknown filter option", ffmpeg.Env{}, ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-af", "volume=nosuchoption=1", "b.flac"}, File: ffmpeg.Files{tone}}, fault.Provider, "nosuchoption"},
		{"no output written", ffmpeg.Env{}, ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-f", "null", "b.flac"}, File: ffmpeg.Files{tone}}, fault.Provider, "no output file"},
		{"endless run hits the time bound", ffmpeg.Env{Timeout: 500 * time.Millisecond}, ffmpeg.BashCmdArguments{Args: []string{"-stream_loop", "-1", "-i", "a.wav", "-c:a", "pcm_s16le", "-f", "null", "b.wav"}, File: ffmpeg.Files{tone}}, fault.Timeout, "did not finish"},
		{"output over the bound", ffmpeg.Env{MaxOutputBytes: 20000}, ffmpeg.BashCmdArguments{Args: []string{"-stream_loop", "20", "-i", "a.wav", "b.wav"}, File: ffmpeg.Files{tone}}, fault.TooLarge, "20000-byte bound"},
		{"extra outputs over the bound", ffmpeg.Env{MaxOutputBytes: 200000, Timeout: time.Minute}, ffmpeg.BashCmdArguments{Args: []string{"-stream_loop", "-1", "-i", "a.wav", "-c:a", "pcm_s16le", "big.wav", "-t", "0.1", "small.wav"}, File: ffmpeg.Files{tone}}, fault.TooLarge, "working directory"},
		{"inputs over the bound", ffmpeg.Env{MaxInputBytes: 1000}, ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "b.flac"}, File: ffmpeg.Files{tone}}, fault.TooLarge, "over 1000 bytes"},
		{"missing binary", ffmpeg.Env{Path: "/nonexistent/ffmpeg"}, ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "b.flac"}, File: ffmpeg.Files{tone}}, fault.Internal, "ffmpeg layer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ffmpeg.BashCmd(context.Background(), tc.env, tc.args)
			if !fault.Is(err, tc.kind) || !strings.Contains(fault.Message(err), tc.substr) {
				t.Fatalf("err = %v (kind %s), want %s saying %q", err, fault.KindOf(err), tc.kind, tc.substr)
			}
		})
	}
}

func TestWorkingDirIsRemoved(t *testing.T) {
	needFFmpeg(t)
	tmp := t.TempDir()
	_, err := ffmpeg.BashCmd(context.Background(), ffmpeg.Env{TempDir: tmp}, ffmpeg.BashCmdArguments{Args: []string{"-i", "a.png", "b.jpg"}, File: ffmpeg.Files{b64(pngImage(t, 8, 8, color.White))}})
	if err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "*"))
	if len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

func TestPlanRefuses(t *testing.T) {
	one := ffmpeg.Files{"x"}
	tests := []struct {
		name  string
		args  ffmpeg.BashCmdArguments
		field string
	}{
		{"shell command string", ffmpeg.BashCmdArguments{Cmd: "ffmpeg -i a.mp4 b.mp4; rm -rf /"}, "cmd"},
		{"no args", ffmpeg.BashCmdArguments{}, "args"},
		{"only ffmpeg", ffmpeg.BashCmdArguments{Args: []string{"ffmpeg"}}, "args"},
		{"pipe operator", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "b.wav", "|", "cat"}, File: one}, "args[3]"},
		{"redirection", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "b.wav", ">", "c"}, File: one}, "args[3]"},
		{"command list", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "b.wav", ";", "c"}, File: one}, "args[3]"},
		{"substitution", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-metadata", "title=$(id)", "b.wav"}, File: one}, "args[3]"},
		{"backticks", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-metadata", "title=`id`", "b.wav"}, File: one}, "args[3]"},
		{"absolute input", ffmpeg.BashCmdArguments{Args: []string{"-i", "/etc/passwd", "b.wav"}, File: one}, "args[1]"},
		{"absolute output", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "/tmp/b.wav"}, File: one}, "args[2]"},
		{"parent dir output", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "../b.wav"}, File: one}, "args[2]"},
		{"subdir output", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "x/b.wav"}, File: one}, "args[2]"},
		{"http input", ffmpeg.BashCmdArguments{Args: []string{"-i", "http://169.254.169.254/", "b.wav"}, File: one}, "args[1]"},
		{"concat protocol", ffmpeg.BashCmdArguments{Args: []string{"-i", "concat:a.wav|b.wav", "c.wav"}, File: one}, "args[1]"},
		{"file protocol", ffmpeg.BashCmdArguments{Args: []string{"-i", "file:a.wav", "c.wav"}, File: one}, "args[1]"},
		{"pipe protocol output", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "pipe:1"}, File: one}, "args[2]"},
		{"udp in a tee output", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-f", "tee", "c.wav|[f=mpegts]udp\\://10.0.0.1:9", "d.wav"}, File: one}, "args[3]"},
		{"movie filter with a URL", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-vf", "movie=http\\://evil.test/x[m];[in][m]overlay", "b.mp4"}, File: one}, "args[3]"},
		{"movie filter with a quoted URL", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-vf", "movie='https://evil.test/x'", "b.mp4"}, File: one}, "args[3]"},
		{"textfile absolute", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.png", "-vf", "drawtext=textfile=/etc/passwd", "b.png"}, File: one}, "args[3]"},
		{"textfile parent", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.png", "-vf", "drawtext=textfile=../../etc/passwd", "b.png"}, File: one}, "args[3]"},
		{"home dir", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.png", "-vf", "subtitles=~/x.srt", "b.png"}, File: one}, "args[3]"},
		{"protocol whitelist", ffmpeg.BashCmdArguments{Args: []string{"-protocol_whitelist", "file,http", "-i", "a.wav", "b.wav"}, File: one}, "args[0]"},
		{"filter script", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-filter_complex_script", "f.txt", "b.wav"}, File: one}, "args[2]"},
		{"option from file", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-/af", "f.txt", "b.wav"}, File: one}, "args[2]"},
		{"concat safe off", ffmpeg.BashCmdArguments{Args: []string{"-safe", "0", "-i", "a.wav", "b.wav"}, File: one}, "args[0]"},
		{"per-stream fs", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-fs:0", "1", "b.wav"}, File: one}, "args[2]"},
		{"pattern input", ffmpeg.BashCmdArguments{Args: []string{"-i", "img%03d.png", "b.wav"}, File: one}, "args[1]"},
		{"option as output", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-y"}, File: one}, "args[2]"},
		{"output is input", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "a.wav"}, File: one}, "args[2]"},
		{"same input twice", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-i", "a.wav", "b.wav"}, File: ffmpeg.Files{"x", "y"}}, "args[3]"},
		{"too few files", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-i", "b.wav", "c.wav"}, File: one}, "file"},
		{"too many files", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "c.wav"}, File: ffmpeg.Files{"x", "y"}}, "file"},
		{"NUL byte", ffmpeg.BashCmdArguments{Args: []string{"-i", "a.wav", "-metadata", "t=a\x00b", "c.wav"}, File: one}, "args[3]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ffmpeg.Plan(tc.args)
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tc.field {
				t.Fatalf("err = %v (kind %s, field %q), want InvalidInput on %s", err, fault.KindOf(err), fault.FieldOf(err), tc.field)
			}
			if !strings.Contains(fault.Message(err), tc.field) {
				t.Errorf("message %q does not name %s", fault.Message(err), tc.field)
			}
			// BashCmd refuses the same way, before looking for the binary.
			if _, err := ffmpeg.BashCmd(context.Background(), ffmpeg.Env{Path: "/nonexistent"}, tc.args); fault.FieldOf(err) != tc.field {
				t.Errorf("BashCmd: err = %v, want the same refusal", err)
			}
		})
	}
}

func TestPlanAcceptsAndBounds(t *testing.T) {
	args := ffmpeg.BashCmdArguments{Args: []string{"-i", "in.mp4", "-vf", "scale=iw/2:-1,drawtext=text='Loading...':x=(w-tw)/2", "-ss", "00:00:01", "-c:v", "libx264", "out.mp4"}, File: ffmpeg.Files{"x"}}
	r, err := ffmpeg.Plan(args)
	if err != nil {
		t.Fatalf("Plan refused ordinary arguments: %v", err)
	}
	if len(r.Inputs) != 1 || r.Inputs[0] != "in.mp4" || r.Output != "out.mp4" {
		t.Fatalf("inputs %v output %q", r.Inputs, r.Output)
	}
	argv := strings.Join(r.Argv(1000), " ")
	for _, want := range []string{"-nostdin", "-protocol_whitelist file -format_whitelist mov,", "-fs 1000 out.mp4"} {
		if !strings.Contains(argv, want) {
			t.Errorf("argv %q lacks %q", argv, want)
		}
	}
	if strings.Index(argv, "-protocol_whitelist") > strings.Index(argv, "-i in.mp4") {
		t.Errorf("the whitelist must come before -i: %q", argv)
	}
}

func TestSniffAndInputFormats(t *testing.T) {
	needFFmpeg(t)
	// A text file (an HLS playlist here) is no supported input: refused before ffmpeg sees it.
	playlist := b64([]byte("#EXTM3U\n#EXTINF:1,\nfile:///etc/passwd\n"))
	_, err := ffmpeg.BashCmd(context.Background(), ffmpeg.Env{}, ffmpeg.BashCmdArguments{Args: []string{"-i", "list.m3u8", "b.wav"}, File: ffmpeg.Files{playlist}})
	if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != "file[0]" {
		t.Fatalf("playlist input: err = %v, want InvalidInput on file[0]", err)
	}
	for sig, want := range map[string]string{
		"\x00\x00\x00\x20ftypisom": "video/mp4", "\x1a\x45\xdf\xa3....": "video/webm", "RIFF\x00\x00\x00\x00AVI ": "video/x-msvideo",
		"RIFF\x00\x00\x00\x00WAVE": "audio/wav", "ID3\x04": "audio/mpeg", "OggS": "audio/ogg", "fLaC": "audio/flac",
		"\xff\xd8\xff\xe0": "image/jpeg", "\x89PNG\r\n\x1a\n": "image/png", "GIF89a": "image/gif", "II*\x00": "image/tiff",
		"BM..": "image/bmp", "#EXTM3U": "", "ffconcat version 1.0": "",
	} {
		if got := ffmpeg.Sniff([]byte(sig)); got != want {
			t.Errorf("Sniff(%q) = %q, want %q", sig, got, want)
		}
	}
}
