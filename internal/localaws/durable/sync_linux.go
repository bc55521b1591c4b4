package durable

import (
	"errors"
	"os"
	"syscall"
)

// datasync writes f's data to the disk, and its metadata only where reading the data needs it.
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

// preallocate reserves n bytes of f from off (zeros), so that later writes there change no file
// size. A file system without fallocate grows the file as it is written.
func preallocate(f *os.File, off, n int64) error {
	err := syscall.Fallocate(int(f.Fd()), 0, off, n)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return nil
	}
	return err
}
