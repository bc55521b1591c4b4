package outbox

import (
	"os"
	"syscall"
)

// datasync writes f's data to the disk, and its metadata only where reading the data needs it.
// Through the file's RawConn, so that a Close meanwhile (a rewrite of the journal) waits for it.
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Fdatasync(int(fd)) }); err != nil {
		return err
	}
	return serr
}
