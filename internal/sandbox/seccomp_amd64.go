package sandbox

import "golang.org/x/sys/unix"

// auditArch is the seccomp_data.arch of this architecture's native system calls.
const auditArch = unix.AUDIT_ARCH_X86_64
