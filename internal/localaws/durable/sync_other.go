//go:build !linux

package durable

import "os"

// datasync writes f to the disk.
func datasync(f *os.File) error { return f.Sync() }
