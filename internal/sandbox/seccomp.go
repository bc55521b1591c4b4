package sandbox

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// denySockets installs a seccomp filter (https://docs.kernel.org/userspace-api/seccomp_filter.html)
// on this thread, which execve hands on to the program: socket(2) fails with EACCES, and so does
// io_uring_setup(2) (io_uring can open and connect sockets without socket(2)), as does any call
// through another architecture's table (i386's socketcall, x32). Landlock, up to ABI 7, leaves UDP
// and connecting to a pathname unix socket (a service's, Docker's) open, and a program working on
// files needs no socket at all. Where the kernel has no seccomp, or this architecture is not
// known here, it does nothing, as the helper does without Landlock.
func denySockets() error {
	if auditArch == 0 {
		return nil
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return nil // EINVAL: a kernel built without seccomp
	}
	filter := socketFilter()
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0)
}

// socketFilter is the BPF program of denySockets, over struct seccomp_data (nr at 0, arch at 4).
func socketFilter() []unix.SockFilter {
	const (
		load  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		x32   = 0x40000000 // x86-64's x32 calls have this bit in their number
		deny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)&unix.SECCOMP_RET_DATA
		allow = unix.SECCOMP_RET_ALLOW
	)
	return []unix.SockFilter{
		{Code: load, K: 4},
		{Code: jeq, K: auditArch, Jf: 5}, // another architecture: deny
		{Code: load, K: 0},
		{Code: jge, K: x32, Jt: 3},
		{Code: jeq, K: unix.SYS_SOCKET, Jt: 2},
		{Code: jeq, K: unix.SYS_IO_URING_SETUP, Jt: 1},
		{Code: ret, K: allow},
		{Code: ret, K: deny},
	}
}
