package e2e

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The CPU each process of the load used, read from /proc (Linux; elsewhere the figures are
// missing): DynamoDB Local's JVM is found by the port it listens on. On a machine shared with
// other work a process's rate follows the CPU it gets, so executions per CPU-second of DynamoDB
// Local compare the load with the ceiling's replay where the rates alone cannot. The JVM's CPU is
// all of its work: tests of other packages sharing it (make test) count in it too; make soak runs
// the load alone.

// clockTick is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// procCPU is the user and system CPU pid has used so far; false when it cannot be read.
func procCPU(pid int) (time.Duration, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The fields after the command's closing parenthesis: state is the 3rd field, utime the 14th.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+st) * clockTick, true
}

// listenerPID is the process listening on endpoint's loopback TCP port (0 when not found).
func listenerPID(endpoint string) int {
	u, err := url.Parse(endpoint)
	if err != nil {
		return 0
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return 0
	}
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			// sl local_address rem_address st ... inode (the 10th field); st 0A is LISTEN.
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" {
				continue
			}
			if _, hexPort, ok := strings.Cut(fs[1], ":"); ok {
				if p, err := strconv.ParseInt(hexPort, 16, 32); err == nil && int(p) == port {
					inodes["socket:["+fs[9]+"]"] = true
				}
			}
		}
		fh.Close()
	}
	if len(inodes) == 0 {
		return 0
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		if l, err := os.Readlink(fd); err == nil && inodes[l] {
			pid, _ := strconv.Atoi(strings.Split(fd, "/")[2])
			return pid
		}
	}
	return 0
}

// cpuMeter reads the CPU of a few processes at the start and the end of a phase.
type cpuMeter struct {
	names []string
	pids  []int
}

// cpuSnap is the processes' CPU at one moment; ok false for a process that could not be read.
type cpuSnap struct {
	at      time.Time
	cpu     []time.Duration
	ok      []bool
	machine machineSample // the whole machine's; total 0 when /proc/stat could not be read
	cpus    int
}

func (m *cpuMeter) add(name string, pid int) {
	m.names, m.pids = append(m.names, name), append(m.pids, pid)
}

func (m *cpuMeter) snap() cpuSnap {
	s := cpuSnap{at: time.Now()}
	if m, n, err := readMachine(); err == nil {
		s.machine, s.cpus = m, n
	}
	for _, pid := range m.pids {
		c, ok := procCPU(pid)
		s.cpu, s.ok = append(s.cpu, c), append(s.ok, ok && pid > 0)
	}
	return s
}

// used is each process's CPU between a and b (-1 when unknown).
func (m *cpuMeter) used(a, b cpuSnap) []time.Duration {
	out := make([]time.Duration, len(m.pids))
	for i := range m.pids {
		out[i] = -1
		if a.ok[i] && b.ok[i] {
			out[i] = b.cpu[i] - a.cpu[i]
		}
	}
	return out
}

// describe says the cores each process used between a and b.
func (m *cpuMeter) describe(a, b cpuSnap) string {
	span := b.at.Sub(a.at)
	var parts []string
	for i, u := range m.used(a, b) {
		if u < 0 {
			parts = append(parts, m.names[i]+" unknown")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.2f", m.names[i], u.Seconds()/span.Seconds()))
	}
	if c, ok := meanBusyCores([]machineSample{a.machine, b.machine}, b.cpus, a.machine.at, b.machine.at); ok && a.machine.total > 0 {
		parts = append(parts, fmt.Sprintf("the whole machine %.2f of %d", c, b.cpus))
	}
	return fmt.Sprintf("%s cores over %v", strings.Join(parts, ", "), span.Round(100*time.Millisecond))
}
