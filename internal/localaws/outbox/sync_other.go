//go:build !linux

package outbox

import "os"

// datasync writes f to the disk.
func datasync(f *os.File) error { return f.Sync() }
