//go:build !amd64 && !arm64

package sandbox

// auditArch is 0 where sinew does not know the architecture's seccomp numbers: no filter.
const auditArch = 0
