//go:build !linux

package durable

import "os"

// datasync writes f to the disk.
func datasync(f *os.File) error { return f.Sync() }

// preallocate does nothing here: the file grows as it is written.
func preallocate(*os.File, int64, int64) error { return nil }
