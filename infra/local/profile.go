package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"syscall"

	"sinew/internal/awscount"
)

// envCPUProfile names the file local mode writes its own CPU profile to: profiled from the start
// until SIGUSR1 or shutdown, whichever comes first, so a load test can profile just its load.
const envCPUProfile = "SINEW_CPUPROFILE"

// statsOf are the figures startStats writes; rec is nil unless envDDBRecord asks for a recording.
type statsOf struct {
	counts *awscount.Counter
	wire   *wireTimes
	gate   *ddbGate
	rec    *ddbRecorder
}

// startStats starts the CPU profile SINEW_CPUPROFILE asks for. On SIGUSR1, or when stop is
// called, whichever comes first, the profile is written, the AWS request counts go to dir's
// aws-requests.json and their times on the wire to aws-wire.json, and the recording of the
// DynamoDB requests (envDDBRecord) is flushed and ends; the log says "stats written".
func startStats(log *slog.Logger, dir string, s statsOf) (stop func(), err error) {
	path := os.Getenv(envCPUProfile)
	var f *os.File
	if path != "" {
		if f, err = os.Create(path); err != nil {
			return nil, fmt.Errorf("%s: %w", envCPUProfile, err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", envCPUProfile, err)
		}
	}
	var once sync.Once
	write := func(asked bool) {
		once.Do(func() {
			if f != nil {
				pprof.StopCPUProfile()
				if err := f.Close(); err != nil {
					log.Error("writing the CPU profile", "file", path, "error", err)
				}
			}
			if err := writeCounts(s.counts, dir); err != nil {
				log.Error("writing the AWS request counts", "error", err)
			}
			if err := s.wire.write(dir, s.gate); err != nil {
				log.Error("writing the AWS request times", "error", err)
			}
			if err := s.rec.close(); err != nil {
				log.Error("writing the DynamoDB requests' recording", "error", err)
			}
			// Said when asked for (SIGUSR1 or a profile), so a plain run's last line stays its own.
			if asked || f != nil {
				log.Info("stats written", "cpu_profile", path)
			}
		})
	}
	stop = func() { write(false) }
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		<-usr1
		signal.Stop(usr1)
		write(true)
	}()
	return stop, nil
}
