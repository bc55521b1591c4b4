package durable

import (
	"os"
	"syscall"
)

// datasync writes f's data to the disk, and its metadata only where reading the data needs it.
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
