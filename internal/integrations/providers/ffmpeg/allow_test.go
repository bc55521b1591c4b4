package ffmpeg_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations/providers/ffmpeg"
)

// clip makes a 1-second 64x48 H.264 MP4 test pattern with the machine's ffmpeg (the file a client
// would send).
func clip(t *testing.T) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "clip.mp4")
	cmd := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=duration=1:size=64x48:rate=10",
		"-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("making the test clip: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEverydayCommandsRun runs the commands people give ffmpeg every day, through the allow-list and
// the sandbox, with real ffmpeg: each must work and give the file it should.
func TestEverydayCommandsRun(t *testing.T) {
	needFFmpeg(t)
	mp4 := b64(clip(t))
	tone := b64(wav(0.5, 8000))
	img := b64(pngImage(t, 40, 30, color.RGBA{0, 128, 255, 255}))
	decodes := func(kind string) func(b []byte) error {
		return func(b []byte) error {
			var err error
			switch kind {
			case "jpeg":
				_, err = jpeg.Decode(bytes.NewReader(b))
			case "png":
				_, err = png.Decode(bytes.NewReader(b))
			case "gif":
				_, err = gif.DecodeAll(bytes.NewReader(b))
			default:
				if got := ffmpeg.Sniff(b); got != kind {
					t.Errorf("output sniffs as %q, want %q", got, kind)
				}
			}
			return err
		}
	}
	tests := []struct {
		name  string
		args  []string
		file  string
		check func([]byte) error
	}{
		{"transcode to H.264 with faststart", []string{"-i", "in.mp4", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "30", "-movflags", "+faststart", "-an", "out.mp4"}, mp4, decodes("video/mp4")},
		{"scale", []string{"-i", "in.mp4", "-vf", "scale=32:-2", "-c:v", "libx264", "-preset", "ultrafast", "small.mp4"}, mp4, decodes("video/mp4")},
		{"thumbnail at a time", []string{"-ss", "0.5", "-i", "in.mp4", "-frames:v", "1", "-q:v", "2", "thumb.jpg"}, mp4, decodes("jpeg")},
		{"first frame by select", []string{"-i", "in.mp4", "-vf", `select=eq(n\,0)`, "-vframes", "1", "first.png"}, mp4, decodes("png")},
		{"thumbnail filter and drawtext", []string{"-i", "in.mp4", "-vf", "thumbnail,scale=48:-1,drawtext=text='Hi':fontcolor=white:x=(w-tw)/2:y=2", "-frames:v", "1", "t.png"}, mp4, decodes("png")},
		{"animated gif", []string{"-t", "0.5", "-i", "in.mp4", "-vf", "fps=5,scale=32:-1:flags=lanczos", "-loop", "0", "anim.gif"}, mp4, decodes("gif")},
		{"audio resampled to mp3", []string{"-i", "tone.wav", "-ar", "16000", "-ac", "1", "-b:a", "64k", "-metadata", "title=A tone", "tone.mp3"}, tone, decodes("audio/mpeg")},
		{"image to webm still", []string{"-loop", "1", "-i", "in.png", "-t", "0.3", "-r", "10", "-c:v", "libvpx", "-pix_fmt", "yuv420p", "still.webm"}, img, decodes("video/webm")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ffmpeg.BashCmd(context.Background(), ffmpeg.Env{}, ffmpeg.BashCmdArguments{Args: tc.args, File: ffmpeg.Files{tc.file}})
			if err != nil {
				t.Fatalf("BashCmd(%q): %v", tc.args, err)
			}
			if err := tc.check(decodeOut(t, out)); err != nil {
				t.Fatalf("output: %v", err)
			}
		})
	}
}

// TestAllowListRefuses holds the ways to make ffmpeg open a second input, or a file or URL of its
// own choosing, and the options that loosen sinew's limits: each is refused before ffmpeg runs,
// naming the argument and what in it is refused.
func TestAllowListRefuses(t *testing.T) {
	one := ffmpeg.Files{"x"}
	tests := []struct {
		name  string
		args  []string
		field string
		says  string
	}{
		{"amovie re-opening the input as a concat list", []string{"-f", "image2", "-i", "in.ub", "-filter_complex", `amovie=in.ub:format_opts=safe\=0:f=concat`, "-c:a", "pcm_u8", "out.wav"}, "args[5]", "amovie"},
		{"movie, name escaped", []string{"-i", "a.mp4", "-vf", `mo\vie=a.mp4[m];[in][m]overlay`, "b.mp4"}, "args[3]", "movie"},
		{"movie, name quoted", []string{"-i", "a.mp4", "-vf", `'movie'=a.mp4`, "b.mp4"}, "args[3]", "movie"},
		{"movie after an allowed filter", []string{"-i", "a.mp4", "-vf", "scale=32:32,movie=a.mp4", "b.mp4"}, "args[3]", "movie"},
		{"amovie in a complex graph", []string{"-i", "a.mp4", "-filter_complex", "[0:a]asplit[x][y];amovie=a.mp4[z]", "b.mp4"}, "args[3]", "amovie"},
		{"subtitles filter", []string{"-i", "a.mp4", "-vf", "subtitles=a.mp4", "b.mp4"}, "args[3]", "subtitles"},
		{"lut3d file", []string{"-i", "a.mp4", "-vf", "lut3d=a.mp4", "b.mp4"}, "args[3]", "lut3d"},
		{"sendcmd", []string{"-i", "a.mp4", "-vf", "sendcmd=f=a.mp4,scale=2:2", "b.mp4"}, "args[3]", "sendcmd"},
		{"drawtext textfile", []string{"-i", "a.png", "-vf", "drawtext=textfile=a.png", "b.png"}, "args[3]", "textfile"},
		{"drawtext positional fontfile", []string{"-i", "a.png", "-vf", "drawtext=a.png", "b.png"}, "args[3]", "key=value"},
		{"drawtext escaped key", []string{"-i", "a.png", "-vf", `drawtext=text\file=a.png`, "b.png"}, "args[3]", "textfile"},
		{"paletteuse debug file", []string{"-i", "a.png", "-i", "p.png", "-filter_complex", "paletteuse=debug_kdtree=k.dot", "b.png"}, "args[5]", "debug_kdtree"},
		{"concat demuxer", []string{"-f", "concat", "-i", "list.mp4", "b.mp4"}, "args[1]", "concat"},
		{"hls demuxer", []string{"-f", "hls", "-i", "a.m3u8", "b.mp4"}, "args[1]", "hls"},
		{"a muxer as an input format", []string{"-f", "null", "-i", "a.mp4", "b.mp4"}, "args[3]", "input format"},
		{"lavfi input", []string{"-f", "lavfi", "-i", "testsrc", "b.png"}, "args[1]", "lavfi"},
		{"concat's safe", []string{"-safe", "0", "-i", "a.mp4", "b.mp4"}, "args[0]", "any path"},
		{"hls's allowed_extensions", []string{"-allowed_extensions", "ALL", "-i", "a.mp4", "b.mp4"}, "args[0]", "not on sinew's list"},
		{"x264 stats file", []string{"-i", "a.mp4", "-x264-params", "stats=x.log", "b.mp4"}, "args[2]", "files"},
		{"two-pass log file", []string{"-i", "a.mp4", "-pass", "1", "b.mp4"}, "args[2]", "log file"},
		{"attachment", []string{"-i", "a.mp4", "-attach", "a.mp4", "b.mkv"}, "args[2]", "reads a file"},
		{"codec_whitelist", []string{"-codec_whitelist", "h264", "-i", "a.mp4", "b.mp4"}, "args[0]", "not on sinew's list"},
		{"tee muxer", []string{"-i", "a.mp4", "-f", "tee", "b.mp4"}, "args[3]", "tee"},
		{"hls muxer by extension", []string{"-i", "a.mp4", "b.m3u8"}, "args[2]", "HLS playlist"},
		{"segment muxer", []string{"-i", "a.mp4", "-f", "segment", "b.mp4"}, "args[3]", "segment"},
		{"a demuxer as an output format", []string{"-i", "a.mp4", "-f", "image2", "b.jpg", "-f", "png_pipe", "c.png"}, "args[7]", "output format"},
		{"text output", []string{"-i", "a.mp4", "b.txt"}, "args[2]", "media extension"},
		{"unknown codec", []string{"-i", "a.mp4", "-c:v", "libnosuch", "b.mp4"}, "args[3]", "libnosuch"},
		{"stream specifier on a global option", []string{"-y:v", "-i", "a.mp4", "b.mp4"}, "args[0]", "stream specifier"},
		{"map with a path", []string{"-i", "a.mp4", "-map", "0:v;x", "b.mp4"}, "args[3]", "stream map"},
		{"option as the last word", []string{"-i", "a.mp4", "-an"}, "args[2]", "output file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := one
			if strings.Count(strings.Join(tc.args, " "), "-i ") == 2 {
				files = ffmpeg.Files{"x", "y"}
			}
			_, err := ffmpeg.Plan(ffmpeg.BashCmdArguments{Args: tc.args, File: files})
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tc.field || !strings.Contains(fault.Message(err), tc.says) {
				t.Fatalf("err = %v (kind %s, field %q), want InvalidInput on %s saying %q", err, fault.KindOf(err), fault.FieldOf(err), tc.field, tc.says)
			}
		})
	}
}

// TestPolyglotRefusedBeforeFFmpegRuns is the finding through BashCmd: an input that sniffs as MP4
// and reads as a concat list, re-opened by amovie. It is refused, with the filter named.
func TestPolyglotRefusedBeforeFFmpegRuns(t *testing.T) {
	poly := []byte("#   ftypisom\nffconcat version 1.0\nfile 'data:application/vnd.apple.mpegurl;base64," +
		base64.StdEncoding.EncodeToString([]byte("#EXTM3U\n#EXTINF:1,\nfile:/etc/passwd\n#EXT-X-ENDLIST\n")) + "'\n")
	if ffmpeg.Sniff(poly) != "video/mp4" {
		t.Fatal("the polyglot does not sniff as MP4; the test would prove nothing")
	}
	_, err := ffmpeg.BashCmd(context.Background(), ffmpeg.Env{Path: "/nonexistent/ffmpeg"}, ffmpeg.BashCmdArguments{
		Args: []string{"-f", "image2", "-i", "in.ub", "-filter_complex", `amovie=in.ub:format_opts=safe\=0:f=concat`, "-c:a", "pcm_u8", "out.wav"},
		File: ffmpeg.Files{b64(poly)}})
	if !fault.Is(err, fault.InvalidInput) || !strings.Contains(fault.Message(err), "amovie") {
		t.Fatalf("err = %v, want InvalidInput naming amovie", err)
	}
}
