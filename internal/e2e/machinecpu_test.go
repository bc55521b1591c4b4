package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The whole machine's CPU over a load, every process's and the kernel's: the three processes'
// own figures (cpuMeter) are averages over the run, and a run's idle tail hides how busy the
// machine was in its middle, where the rate is made.

// machineSample is /proc/stat's aggregate line at one moment, in clock ticks.
type machineSample struct {
	at          time.Time
	busy, total int64
}

// parseProcStat reads /proc/stat's text: the aggregate line's busy and total ticks (busy being
// all but idle and iowait) and how many CPUs it sums.
func parseProcStat(text string) (busy, total int64, cpus int, err error) {
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "cpu":
			if len(f) < 6 {
				return 0, 0, 0, fmt.Errorf("/proc/stat: short cpu line %q", line)
			}
			for i, v := range f[1:] {
				n, perr := strconv.ParseInt(v, 10, 64)
				if perr != nil {
					return 0, 0, 0, fmt.Errorf("/proc/stat: cpu line field %d: %w", i+1, perr)
				}
				// The fields after steal (guest, guest_nice) are counted in user and nice already.
				if i < 8 {
					total += n
					if i != 3 && i != 4 { // idle, iowait
						busy += n
					}
				}
			}
		case len(f) > 0 && strings.HasPrefix(f[0], "cpu"):
			cpus++
		}
	}
	if total == 0 || cpus == 0 {
		return 0, 0, 0, fmt.Errorf("/proc/stat: no cpu lines")
	}
	return busy, total, cpus, nil
}

// readMachine is the machine's CPU now, and how many CPUs it sums.
func readMachine() (machineSample, int, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineSample{}, 0, err
	}
	busy, total, cpus, err := parseProcStat(string(data))
	return machineSample{at: time.Now(), busy: busy, total: total}, cpus, err
}

// machineSampler reads /proc/stat at a steady interval until stopped; its goroutine alone appends
// to samples, which end reads after it has returned.
type machineSampler struct {
	cpus    int
	samples []machineSample
	stop    chan struct{}
	stopped sync.Once
	done    chan struct{}
}

// sampleMachine starts sampling every interval; nil, with the reason logged, where /proc/stat
// cannot be read (not Linux), so that the figure is missing rather than wrong.
func sampleMachine(t testing.TB, every time.Duration) *machineSampler {
	first, cpus, err := readMachine()
	if err != nil {
		t.Logf("the machine's CPU is not sampled: %v", err)
		return nil
	}
	s := &machineSampler{cpus: cpus, samples: []machineSample{first}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				if m, _, err := readMachine(); err == nil {
					s.samples = append(s.samples, m)
				}
			}
		}
	}()
	t.Cleanup(func() { s.end() }) // a test that fails before its end stops the sampling too
	return s
}

// end stops the sampling and answers the samples.
func (s *machineSampler) end() []machineSample {
	s.stopped.Do(func() { close(s.stop) })
	<-s.done
	return s.samples
}

// busyCores is how many of the machine's cpus were busy between each sample and the next, by
// the interval's start from began ("0.0 1.42, 0.5 1.87").
func busyCores(samples []machineSample, cpus int, began time.Time) string {
	parts := make([]string, 0, len(samples))
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		if b.total <= a.total {
			continue
		}
		cores := float64(b.busy-a.busy) / float64(b.total-a.total) * float64(cpus)
		parts = append(parts, fmt.Sprintf("%.1f %.2f", a.at.Sub(began).Seconds(), cores))
	}
	return strings.Join(parts, ", ")
}

// meanBusyCores is the busy cpus over the samples' intervals that lie within [from, to]; false
// when none does.
func meanBusyCores(samples []machineSample, cpus int, from, to time.Time) (float64, bool) {
	var busy, total int64
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		if a.at.Before(from) || b.at.After(to) {
			continue
		}
		busy, total = busy+b.busy-a.busy, total+b.total-a.total
	}
	if total <= 0 {
		return 0, false
	}
	return float64(busy) / float64(total) * float64(cpus), true
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name              string
		text              string
		busy, total, cpus int64
		err               bool
	}{
		{"two cpus, guest counted once",
			"cpu  100 5 50 800 20 3 2 1 7 0\ncpu0 50 2 25 400 10 1 1 0 4 0\ncpu1 50 3 25 400 10 2 1 1 3 0\nintr 1 2\n",
			100 + 5 + 50 + 3 + 2 + 1, 100 + 5 + 50 + 800 + 20 + 3 + 2 + 1, 2, false},
		{"an older kernel's eight fields", "cpu  10 0 10 80 0 0 0 0\ncpu0 10 0 10 80 0 0 0 0\n", 20, 100, 1, false},
		{"no cpu line", "intr 1\n", 0, 0, 0, true},
		{"not a number", "cpu  x 0 0 0 0\ncpu0 1 0 0 0 0\n", 0, 0, 0, true},
	}
	for _, tt := range tests {
		busy, total, cpus, err := parseProcStat(tt.text)
		if (err != nil) != tt.err {
			t.Errorf("%s: err = %v, want error %v", tt.name, err, tt.err)
			continue
		}
		if !tt.err && (busy != tt.busy || total != tt.total || int64(cpus) != tt.cpus) {
			t.Errorf("%s: = %d busy, %d total, %d cpus; want %d, %d, %d", tt.name, busy, total, cpus, tt.busy, tt.total, tt.cpus)
		}
	}
}

func TestBusyCores(t *testing.T) {
	began := time.Unix(100, 0)
	at := func(ms int) time.Time { return began.Add(time.Duration(ms) * time.Millisecond) }
	samples := []machineSample{
		{at(0), 0, 0},
		{at(500), 50, 100},   // half the ticks busy: 1 of 2 cpus
		{at(1000), 140, 200}, // 90 of 100: 1.8
		{at(1500), 140, 200}, // no ticks counted: left out
		{at(2000), 150, 300}, // 10 of 100: 0.2
	}
	if got, want := busyCores(samples, 2, began), "0.0 1.00, 0.5 1.80, 1.5 0.20"; got != want {
		t.Errorf("busyCores = %q, want %q", got, want)
	}
	tests := []struct {
		name     string
		from, to time.Time
		want     float64
		ok       bool
	}{
		{"the middle two intervals", at(500), at(1500), 1.8, true},
		{"all", at(0), at(2000), 1.0, true},
		{"none inside", at(600), at(900), 0, false},
	}
	for _, tt := range tests {
		got, ok := meanBusyCores(samples, 2, tt.from, tt.to)
		if ok != tt.ok || (ok && (got < tt.want-1e-9 || got > tt.want+1e-9)) {
			t.Errorf("%s: meanBusyCores = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestDescribeGivesTheMachine(t *testing.T) {
	m := &cpuMeter{}
	a := m.snap()
	time.Sleep(100 * time.Millisecond) // ten clock ticks: idle ones count in the total too
	b := m.snap()
	if a.machine.total == 0 {
		t.Fatalf("no /proc/stat sample: %+v", a)
	}
	if got := m.describe(a, b); !strings.Contains(got, "the whole machine ") {
		t.Errorf("describe = %q, want the whole machine's busy CPUs in it", got)
	}
}

func TestMachineSamplerStopsAtCleanup(t *testing.T) {
	var s *machineSampler
	t.Run("a test that never calls end", func(t *testing.T) {
		if s = sampleMachine(t, time.Millisecond); s == nil {
			t.Fatal("/proc/stat could not be sampled")
		}
	})
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the sampler still runs after its test's cleanup")
	}
	if got := s.end(); len(got) == 0 {
		t.Error("end after the cleanup answers no samples")
	}
}
