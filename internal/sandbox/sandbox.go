// Package sandbox runs a program on untrusted input, confined to one work directory.
//
// A program such as ffmpeg follows paths and URLs it finds inside the files it is given (concat
// lists, playlists, subtitles), so checking its arguments can never be the whole defence.
// CommandContext gives an *exec.Cmd that starts this same executable again (/proc/self/exe, under
// a reserved argv[0]) as a small helper; the helper, in this package's init, before the service's
// main runs, confines itself and then execs the program, which inherits every restriction:
//
//   - an empty environment (the caller passes the few variables the program needs), so no
//     credential of the service reaches it;
//   - Landlock (Linux 5.13+; https://docs.kernel.org/userspace-api/landlock.html): the program may
//     read and write only its work directory, read and execute only the system's library and
//     program directories (and the ones the caller names), make no TCP connection (ABI 4+), and
//     reach no abstract unix socket nor signal a process outside (ABI 6+). /proc, /etc, /home, the
//     service's own data and keys are out of reach, /proc/<parent>/environ included;
//   - seccomp: no socket at all (socket(2) and io_uring_setup(2) fail), since Landlock leaves UDP
//     and connecting to a pathname unix socket open;
//   - no_new_privs, no core dumps, and its own process group (so a timeout kills all of it).
//
// Where the kernel has no Landlock (Lambda's may not enable it; user namespaces, which other
// sandboxes rest on, are not available there at all), the helper still empties the environment and
// skips Landlock, which Available reports so the caller can log it. The parent also marks itself non-dumpable (SetParentUndumpable), so that a
// process of the same user that is not root cannot read its /proc/<pid>/environ or memory.
//
// In AWS none of this is where the isolation should end: the process that runs an untrusted program
// should hold no credential worth stealing. See the ffmpeg provider's package comment for the
// media-function design.
package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// helperArg0 is the argv[0] that makes a start of this executable the helper.
const helperArg0 = "sinew-sandbox-helper"

// exitSetup is the helper's exit status when it cannot confine itself: the program never ran.
const exitSetup = 126

// SystemDirs are readable (and executable) by every confined program: where programs and their
// shared libraries live, on Debian and on a Lambda image (layers unpack under /opt). Nothing here
// holds a secret of the service.
var SystemDirs = []string{"/usr", "/lib", "/lib64", "/bin", "/opt", "/etc/fonts", "/var/cache/fontconfig"}

// SystemFiles are single readable files the dynamic loader and libraries need.
var SystemFiles = []string{"/etc/ld.so.cache", "/dev/null", "/dev/urandom"}

// ReadablePaths are the directories and files every confined program may read, beside its work
// directory and the ReadDirs of its Spec: SystemDirs, then SystemFiles. No data of the service (a
// local data directory, keys) may lie under any of them.
func ReadablePaths() []string {
	return slices.Concat(SystemDirs, SystemFiles)
}

// Spec is one confined run.
type Spec struct {
	Path     string   // the program, an absolute path
	Args     []string // its arguments, without argv[0]
	Dir      string   // its work directory: the only place it may read and write
	ReadDirs []string // more read-only directories (beside SystemDirs), e.g. the program's own
	Env      []string // its whole environment (KEY=VALUE); nil means none at all
}

// config is what the parent hands the helper, as its argv[1].
type config struct {
	Path     string   `json:"path"`
	Dir      string   `json:"dir"`
	ReadDirs []string `json:"read_dirs"`
}

// CommandContext gives the command that runs spec confined, killed when ctx ends (exec's default:
// set Cancel to kill its process group instead). The caller sets Stdout, Stderr and the like as
// for any command; SysProcAttr is set: a process group of its own, killed if this process dies.
func CommandContext(ctx context.Context, spec Spec) (*exec.Cmd, error) {
	if !filepath.IsAbs(spec.Path) || !filepath.IsAbs(spec.Dir) {
		return nil, fmt.Errorf("sandbox: the program %q and work directory %q must be absolute paths", spec.Path, spec.Dir)
	}
	// A readable directory holding the work directory holds its siblings too: other runs' inputs.
	for _, d := range slices.Concat(SystemDirs, spec.ReadDirs) {
		if rel, err := filepath.Rel(d, spec.Dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return nil, fmt.Errorf("sandbox: the work directory %s is inside %s, which a confined program may read", spec.Dir, d)
		}
	}
	cfg, err := json.Marshal(config{Path: spec.Path, Dir: spec.Dir, ReadDirs: spec.ReadDirs})
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = append([]string{helperArg0, string(cfg)}, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	if cmd.Env == nil {
		cmd.Env = []string{} // nil would hand the child this process's environment
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}

// Available answers the kernel's Landlock ABI version, 0 when it has none (then a confined program
// runs with an empty environment only).
func Available() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

var undumpable sync.Once

// SetParentUndumpable marks this process non-dumpable, once: its /proc/<pid>/environ, mem and
// maps are then owned by root and refused to other processes of the same (non-root) user, such as
// a program it runs on untrusted input. It also turns off core dumps, which could hold secrets.
func SetParentUndumpable() error {
	var err error
	undumpable.Do(func() { err = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) })
	return err
}

func init() {
	if len(os.Args) >= 2 && os.Args[0] == helperArg0 {
		helper(os.Args[1], os.Args[2:])
	}
}

// helper confines this process and execs the program; it never returns.
func helper(rawCfg string, args []string) {
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "sandbox: "+format+"\n", a...)
		os.Exit(exitSetup)
	}
	var cfg config
	if err := json.Unmarshal([]byte(rawCfg), &cfg); err != nil {
		fail("bad configuration: %v", err)
	}
	// The restrictions below belong to this thread's credentials, which execve keeps.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail("no_new_privs: %v", err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}); err != nil {
		fail("core limit: %v", err)
	}
	if Available() > 0 {
		if err := restrict(cfg); err != nil {
			fail("landlock: %v", err)
		}
	}
	if err := denySockets(); err != nil {
		fail("seccomp: %v", err)
	}
	err := syscall.Exec(cfg.Path, append([]string{filepath.Base(cfg.Path)}, args...), os.Environ())
	fail("exec %s: %v", cfg.Path, err)
}

// restrict applies the Landlock rules: read and write in the work directory, read and execute in
// the system directories, nothing else, no TCP, no outside signals or abstract sockets.
func restrict(cfg config) error {
	return landlock.V11.BestEffort().Restrict(
		landlock.RWDirs(cfg.Dir),
		landlock.RODirs(append(append([]string{}, SystemDirs...), cfg.ReadDirs...)...).IgnoreIfMissing(),
		landlock.ROFiles(SystemFiles...).IgnoreIfMissing(),
		landlock.RWFiles("/dev/null").IgnoreIfMissing(),
	)
}
