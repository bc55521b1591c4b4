package sfnapi

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"sinew/internal/asl"
)

// maxExpressLog is how many Express log lines local mode keeps (the newest): what its console
// shows of an Express execution, in place of the CloudWatch log group AWS writes them to.
const maxExpressLog = 5000

// expressLog is the newest Express log lines, in the order written; its zero value is empty.
// Held in memory only: the lines of before a restart are in local mode's own log alone.
type expressLog struct {
	mu    sync.Mutex
	lines []expressLine
	next  int // where the next line goes once the ring is full
}

type expressLine struct {
	arn  string
	text json.RawMessage
}

func (l *expressLog) add(arn string, text json.RawMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) < maxExpressLog {
		l.lines = append(l.lines, expressLine{arn, text})
		return
	}
	l.lines[l.next] = expressLine{arn, text}
	l.next = (l.next + 1) % maxExpressLog
}

// ExpressLog gives the log lines, oldest first, of the Express executions of the state machine
// machineArn named name (a name may run many times), each a JSON object as a log group would hold
// it: time, msg, execution_arn, state_machine_arn, status, duration_ms, error.
func (s *Service) ExpressLog(machineArn, name string) []json.RawMessage {
	prefix := strings.Replace(machineArn, ":stateMachine:", ":express:", 1) + ":" + name + ":"
	l := &s.expressLog
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []json.RawMessage
	for i := range l.lines {
		if e := l.lines[(l.next+i)%len(l.lines)]; strings.HasPrefix(e.arn, prefix) {
			out = append(out, e.text)
		}
	}
	return out
}

// logExpressEnd writes the line of an Express execution's end to local mode's log and to the
// lines ExpressLog reads.
func (s *Service) logExpressEnd(d asl.Description) {
	dur := d.StopDate.Sub(d.StartDate).Milliseconds()
	s.log.Info("express execution ended", "execution_arn", d.ExecutionArn, "state_machine_arn", d.StateMachineArn,
		"status", d.Status, "duration_ms", dur, "error", d.Error)
	text, err := json.Marshal(map[string]any{"time": time.Now().UTC(), "msg": "express execution ended", "execution_arn": d.ExecutionArn,
		"state_machine_arn": d.StateMachineArn, "status": d.Status, "duration_ms": dur, "error": d.Error})
	if err == nil {
		s.expressLog.add(d.ExecutionArn, text)
	}
}
