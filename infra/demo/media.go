package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
)

// makeClip writes a small real video with the machine's ffmpeg (a 2-second 160x120 test pattern
// with a 440 Hz tone, H.264 and AAC in MP4: about 15 KB, small enough to travel as a tool call's
// argument), as a client would have a file to send.
func makeClip(ctx context.Context, dir string) ([]byte, error) {
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		return nil, errors.New("ffmpeg is not on PATH: install it (make deps, or apt-get install ffmpeg)")
	}
	path := filepath.Join(dir, "clip.mp4")
	cmd := exec.CommandContext(ctx, bin, "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
		"-f", "lavfi", "-i", "testsrc=size=160x120:rate=10",
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=8000",
		"-t", "2", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ffmpeg could not make the test clip: %v: %s", err, bytes.TrimSpace(out))
	}
	return os.ReadFile(path)
}

// pngSize reads a PNG's width and height.
func pngSize(b []byte) (w, h int, err error) {
	c, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return 0, 0, fmt.Errorf("not a PNG file: %w", err)
	}
	return c.Width, c.Height, nil
}
