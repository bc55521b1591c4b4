// Package durable keeps local mode's Step Functions state across restarts and crashes.
//
// It keeps state machines, executions (their records, and the history once closed), and, for every
// running execution, a journal of what it has done — each Lambda invocation's answer, each timer's
// deadline (Wait states, retry back-offs, task timeouts and heartbeats), each task token's answer,
// the name of each child execution it started and the time of each history event. After a restart
// the execution runs again from its start and the Recorder replays the journal: completed
// invocations are answered from it (nothing runs twice), timers end at their recorded deadlines,
// answers given to tokens are delivered again, a states:startExecution task finds the child it
// started before, events keep their first times, and tokens issued before the crash keep working as
// aliases of the new ones. The invocation that was running at the crash has no answer in the
// journal, so it runs again (at-least-once), which the executors' idempotency by call id absorbs.
//
// Journal writes are group commits. A completed invocation without a task token joins its
// execution's next durable write (and is durable before the execution makes another invocation,
// arms a Wait or back-off, starts a child, takes an answer, shows its history or its end), or the
// background writer's a moment later; an execution that ends first drops it in its closing
// record's transaction. A crash in between runs that invocation again, as one running at the crash
// does. An invocation that carried a task token is durable before the task waits on it.
//
// The store is an append-only log (see wal.go) and, in memory, the state it makes; a kill -9 or a
// crash at any point leaves the last acknowledged commit.
package durable

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Store is the durable state, safe for concurrent use.
type Store struct {
	w *committer

	// syncMu is held by the one commit at a time, through its fdatasync; wmu only while a frame is
	// written, so that writes (a start to stage) go on during another commit's fdatasync.
	syncMu sync.Mutex
	wmu    sync.Mutex
	mu     sync.RWMutex
	log    *logFile // nil once closed
	st     *state
	staged []stagedFrame // written, not yet durable, in the log's order (s.wmu)
	seq    Frame         // the last frame written (s.wmu)
	synced atomic.Uint64 // the last frame durable
}

// Frame names a write in the log's order: a later write has a larger one.
type Frame uint64

// rewriteFactor is how many times its last rewritten size the log may grow to before a commit
// rewrites it (and rewriteMin the size under which it never is).
const rewriteFactor = 4

var rewriteMin int64 = 64 << 20 // a variable for the tests

// Open opens (or creates) the store file at path.
func Open(path string) (*Store, error) {
	st, err := readLog(path)
	if err != nil {
		return nil, fmt.Errorf("durable: open: %w", err)
	}
	s := &Store{st: st}
	old, err := os.Open(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("durable: open: %w", err)
	}
	l, spans, err := rewrite(path, st, func(sp span) ([]byte, error) { return readSpan(old, sp) })
	if old != nil {
		old.Close()
	}
	if err != nil {
		return nil, err
	}
	st.events = spans
	s.log = l
	s.w = &committer{s: s}
	return s, nil
}

func readSpan(f *os.File, sp span) ([]byte, error) {
	b := make([]byte, sp.n)
	if _, err := f.ReadAt(b, sp.off); err != nil {
		return nil, fmt.Errorf("durable: read a history: %w", err)
	}
	return b, nil
}

// Close closes the file; later writes fail with ErrClosed.
func (s *Store) Close() error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return nil
	}
	var err error
	if len(s.staged) > 0 {
		err = datasync(s.log.f)
	}
	err = errors.Join(err, s.log.f.Close())
	s.log = nil
	return err
}

// commit writes ops as one frame and makes it, and every frame staged before it, durable; then
// their ops join the state, in the log's order. With no ops and nothing staged it does nothing.
func (s *Store) commit(ops []op) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.wmu.Lock()
	l := s.log
	if l == nil {
		s.wmu.Unlock()
		return ErrClosed
	}
	if len(ops) > 0 {
		if _, err := s.writeLocked(ops); err != nil {
			s.wmu.Unlock()
			return err
		}
	}
	frames := s.staged
	s.staged = nil
	s.wmu.Unlock()
	if len(frames) == 0 {
		return nil
	}
	if err := datasync(l.f); err != nil {
		s.wmu.Lock()
		s.staged = append(frames, s.staged...) // the next commit tries them again
		s.wmu.Unlock()
		return fmt.Errorf("durable: sync %s: %w", l.path, err)
	}
	s.applyDurable(frames)
	s.wmu.Lock()
	s.maybeCompact(l)
	s.wmu.Unlock()
	return nil
}

// maybeCompact rewrites the log once it has grown well past its last rewrite (s.syncMu and s.wmu
// held). A rewrite keeps the state, not the frames after it: those written during the commit are
// made durable first (an fdatasync more, only when a rewrite is due; under a steady load some
// always are).
func (s *Store) maybeCompact(l *logFile) {
	if l.end <= rewriteMin || l.end <= rewriteFactor*l.base {
		return
	}
	if len(s.staged) > 0 {
		if datasync(l.f) != nil {
			return // they stay staged; the next commit tries again
		}
		s.applyDurable(s.staged)
		s.staged = nil
	}
	s.compact()
}

// applyDurable makes durable frames part of the state, in the log's order (s.syncMu held).
func (s *Store) applyDurable(frames []stagedFrame) {
	s.mu.Lock()
	for _, f := range frames {
		for i, o := range f.ops {
			s.st.apply(o, f.base+int64(f.at[i]))
		}
	}
	s.mu.Unlock()
	s.synced.Store(uint64(frames[len(frames)-1].seq))
}

// writeLocked writes ops as one frame, not yet durable, staged for the next commit (s.wmu held).
func (s *Store) writeLocked(ops []op) (Frame, error) {
	var p []byte
	at := make([]int, len(ops))
	for i, o := range ops {
		p, at[i] = appendOp(p, o)
	}
	base, err := s.log.write(p)
	if err != nil {
		return 0, err
	}
	s.seq++
	s.staged = append(s.staged, stagedFrame{ops: ops, at: at, base: base, seq: s.seq})
	return s.seq, nil
}

// stagedFrame is a frame written but not yet durable.
type stagedFrame struct {
	ops  []op
	at   []int // where each op's value starts in the frame's payload
	base int64 // where the payload starts in the file
	seq  Frame
}

// StageExecution writes a running execution's record as PutExecution does, but does not wait
// for the disk: the record survives a kill -9 of the process from now on, and is durable (and
// read back by Executions) after the next commit, such as SyncTo its frame or the execution's
// closing record. A start staged this way and its end, when the execution is short, share one
// fdatasync.
func (s *Store) StageExecution(x Execution) (Frame, error) {
	ops, err := s.executionOps(x)
	if err != nil {
		return 0, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.log == nil {
		return 0, ErrClosed
	}
	f, err := s.writeLocked(ops)
	if err != nil {
		return 0, fmt.Errorf("durable: write execution %s: %w", x.Arn, err)
	}
	return f, nil
}

// Sync makes every write staged so far durable.
func (s *Store) Sync() error {
	if err := s.w.update(); err != nil {
		return fmt.Errorf("durable: sync: %w", err)
	}
	return nil
}

// SyncTo makes frame f durable. Unlike Sync it waits for no frame staged after f: when a commit
// under way (or already done) holds f, it waits for that one only.
func (s *Store) SyncTo(f Frame) error {
	if s.durable(f) {
		return nil
	}
	if err := s.w.syncTo(f); err != nil {
		return fmt.Errorf("durable: sync: %w", err)
	}
	return nil
}

func (s *Store) durable(f Frame) bool { return Frame(s.synced.Load()) >= f }

// compact rewrites the log as the state it makes (s.wmu held). A failure leaves the old log.
func (s *Store) compact() {
	s.mu.RLock()
	l, spans, err := rewrite(s.log.path, s.st, func(sp span) ([]byte, error) { return readSpan(s.log.f, sp) })
	s.mu.RUnlock()
	if err != nil {
		return
	}
	s.mu.Lock()
	old := s.log
	s.log, s.st.events = l, spans
	s.mu.Unlock()
	old.f.Close()
}

// Machine is a state machine as CreateStateMachine made it.
type Machine struct {
	Arn        string    `json:"arn"`
	Name       string    `json:"name"`
	Definition string    `json:"definition"`
	RoleArn    string    `json:"roleArn"`
	Type       string    `json:"type"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated,omitzero"`
	Revision   int       `json:"revision"`
	// Builtin machines (statemachines/ loaded at start) are re-loaded from their files each start.
	Builtin bool `json:"builtin,omitempty"`
}

// Execution is an execution's record. Events is set once the execution has closed.
type Execution struct {
	Arn        string    `json:"arn"`
	MachineArn string    `json:"machineArn"`
	Name       string    `json:"name"`
	Input      string    `json:"input"`
	Start      time.Time `json:"start"`
	Status     string    `json:"status"`
	Stop       time.Time `json:"stop,omitzero"`
	Output     string    `json:"output,omitempty"`
	Error      string    `json:"error,omitempty"`
	Cause      string    `json:"cause,omitempty"`
	Seq        uint64    `json:"seq"`               // start order, for listing newest first
	RoleArn    string    `json:"roleArn,omitempty"` // the machine's role when the execution started
	// Definition is the state machine's definition the execution started with: an update of the
	// machine does not change a running execution, before or after a restart, nor what
	// DescribeStateMachineForExecution answers of it once it has ended.
	Definition string          `json:"definition,omitempty"`
	Events     json.RawMessage `json:"events,omitempty"`
	// DefinitionRef names Definition in the store's definitions (its stored form: many executions
	// share a definition, which is written once, not with each start). Executions fills in the
	// Definition of a running record only; Definition(ref) reads a closed one's when asked.
	DefinitionRef string `json:"definitionRef,omitempty"`
	// Revision and Updated are the machine's revision and its last update (its creation, if never
	// updated) when the execution started.
	Revision int       `json:"revision,omitempty"`
	Updated  time.Time `json:"updated,omitzero"`
}

// PutMachine writes m.
func (s *Store) PutMachine(m Machine) error { return s.put(bMachines, m.Arn, m) }

// DeleteMachine removes a machine.
func (s *Store) DeleteMachine(arn string) error {
	return s.w.update(op{kind: opDel, bucket: bMachines, a: arn})
}

// Machines lists every machine.
func (s *Store) Machines() ([]Machine, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Machine, 0, len(s.st.kv[bMachines]))
	for _, v := range s.st.kv[bMachines] {
		var m Machine
		if err := json.Unmarshal(v, &m); err != nil {
			return nil, fmt.Errorf("durable: list machines: %w", err)
		}
		out = append(out, m)
	}
	return out, nil
}

// PutExecution writes an execution's record. A running record opens the execution's journal; a
// closed record (Events set) drops it in the same commit: nothing of it is replayed again (and
// background journal writes that come later find no journal to write to).
func (s *Store) PutExecution(x Execution) error {
	ops, err := s.executionOps(x)
	if err != nil {
		return err
	}
	if err := s.w.update(ops...); err != nil {
		return fmt.Errorf("durable: write execution %s: %w", x.Arn, err)
	}
	return nil
}

// executionOps are the ops that write execution record x.
func (s *Store) executionOps(x Execution) ([]op, error) {
	var ops []op
	if def := x.Definition; def != "" {
		sum := sha256.Sum256([]byte(def))
		x.DefinitionRef, x.Definition = hex.EncodeToString(sum[:]), ""
		s.mu.RLock()
		_, known := s.st.kv[bDefs][x.DefinitionRef]
		s.mu.RUnlock()
		if !known {
			ops = append(ops, op{kind: opPut, bucket: bDefs, a: x.DefinitionRef, v: []byte(def)})
		}
	}
	events := x.Events
	x.Events = nil
	data, err := json.Marshal(x)
	if err != nil {
		return nil, fmt.Errorf("durable: encode execution: %w", err)
	}
	ops = append(ops, op{kind: opPut, bucket: bExecs, a: x.Arn, v: data})
	if events != nil {
		return append(ops, op{kind: opPut, bucket: bEvents, a: x.Arn, v: events}, op{kind: opJDrop, a: x.Arn}), nil
	}
	return append(ops, op{kind: opJOpen, a: x.Arn}), nil
}

// DeleteExecution removes an execution and its journal (a start that the engine refused).
func (s *Store) DeleteExecution(arn string) error {
	return s.w.update(op{kind: opJDrop, a: arn}, op{kind: opDel, bucket: bExecs, a: arn}, op{kind: opDel, bucket: bEvents, a: arn})
}

// Executions lists every execution record, without their events (ExecutionEvents reads them).
func (s *Store) Executions() ([]Execution, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Execution, 0, len(s.st.kv[bExecs]))
	for _, v := range s.st.kv[bExecs] {
		var x Execution
		if err := json.Unmarshal(v, &x); err != nil {
			return nil, fmt.Errorf("durable: list executions: %w", err)
		}
		// A closed record keeps its ref only: its definition is read when asked, not held by every
		// record in memory.
		if x.DefinitionRef != "" && x.Status == statusRunning {
			def, ok := s.st.kv[bDefs][x.DefinitionRef]
			if !ok {
				return nil, fmt.Errorf("durable: list executions: execution %s: its definition %s is missing", x.Arn, x.DefinitionRef)
			}
			x.Definition, x.DefinitionRef = string(def), ""
		}
		out = append(out, x)
	}
	return out, nil
}

// statusRunning is the status of an execution that has not ended (asl.StatusRunning).
const statusRunning = "RUNNING"

// Definition gives the stored definition that ref (an Execution's DefinitionRef) names.
func (s *Store) Definition(ref string) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	def, ok := s.st.kv[bDefs][ref]
	if !ok {
		return "", fmt.Errorf("durable: definition %s is not stored", ref)
	}
	return string(def), nil
}

// ExecutionEvents gives a closed execution's history as JSON (nil while it runs).
func (s *Store) ExecutionEvents(arn string) (json.RawMessage, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sp, ok := s.st.events[arn]
	if !ok {
		return nil, nil
	}
	if s.log == nil {
		return nil, ErrClosed
	}
	return readSpan(s.log.f, sp)
}

func (s *Store) put(bucket byte, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("durable: encode %s: %w", key, err)
	}
	if err := s.w.update(op{kind: opPut, bucket: bucket, a: key, v: data}); err != nil {
		return fmt.Errorf("durable: write %s: %w", key, err)
	}
	return nil
}

// Journal entries of one execution, keyed "c/<call key>" (a call), "t/<timer key>" (a deadline),
// "o/<call key>" (a token's answer), "x/<child key>" (a child's name), "e/<event id>" (an event's
// time and type).

// Call is a completed Lambda invocation.
type Call struct {
	Payload       []byte `json:"payload,omitempty"`
	FunctionError string `json:"functionError,omitempty"`
	ServiceCode   string `json:"serviceCode,omitempty"` // a Lambda API error instead of an answer
	ServiceMsg    string `json:"serviceMessage,omitempty"`
	Token         string `json:"token,omitempty"` // the task token the invocation carried (first issue)
}

// Outcome is the answer given to a task token.
type Outcome struct {
	Success bool   `json:"success"`
	Output  string `json:"output,omitempty"`
	Error   string `json:"error,omitempty"`
	Cause   string `json:"cause,omitempty"`
}

// Stamp is a history event's time, with its type to check a replay against.
type Stamp struct {
	At   time.Time
	Type string
}

// Journal is a running execution's record of what it has done.
type Journal struct {
	Calls    map[string]Call
	Timers   map[string]time.Time // deadline by timer key ("Wait W#1", ...)
	Outcomes map[string]Outcome
	Children map[string]string // child execution name by start key
	Events   map[int64]Stamp   // by event id
}

func encodeTime(t time.Time) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(t.UnixNano()))
	return b[:]
}

func decodeTime(b []byte) time.Time { return time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC() }

// encodeStamp is the journal value of an event's stamp.
func encodeStamp(s Stamp) []byte { return append(encodeTime(s.At), s.Type...) }

func (s *Store) journalPut(exec, key string, v []byte) error {
	if err := s.w.update(op{kind: opJPut, a: exec, b: key, v: v}); err != nil {
		return fmt.Errorf("durable: journal %s: %w", exec, err)
	}
	return nil
}

// RecordCall journals a completed invocation.
func (s *Store) RecordCall(exec, key string, c Call) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return s.journalPut(exec, "c/"+key, data)
}

// RecordTimer journals the deadline of timer key.
func (s *Store) RecordTimer(exec, key string, deadline time.Time) error {
	return s.journalPut(exec, "t/"+key, encodeTime(deadline))
}

// RecordChild journals the name of the child execution started under key.
func (s *Store) RecordChild(exec, key, name string) error {
	return s.journalPut(exec, "x/"+key, []byte(name))
}

// recordLate writes journal entries (full keys) of many executions in one commit, into journals
// that are open: an execution that has closed meanwhile keeps none.
func (s *Store) recordLate(entries map[string]map[string][]byte) error {
	var ops []op
	for exec, kv := range entries {
		for k, v := range kv {
			ops = append(ops, op{kind: opJPutOpen, a: exec, b: k, v: v})
		}
	}
	if err := s.w.update(ops...); err != nil {
		return fmt.Errorf("durable: journal: %w", err)
	}
	return nil
}

// RecordOutcome journals the answer to the token of call key.
func (s *Store) RecordOutcome(exec, key string, o Outcome) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return s.journalPut(exec, "o/"+key, data)
}

// ForgetOutcome removes an answer the engine refused after it was journaled.
func (s *Store) ForgetOutcome(exec, key string) error {
	return s.w.update(op{kind: opJDel, a: exec, b: "o/" + key})
}

// LoadJournal reads an execution's journal (empty when it has none).
func (s *Store) LoadJournal(exec string) (*Journal, error) {
	j := &Journal{Calls: map[string]Call{}, Timers: map[string]time.Time{}, Outcomes: map[string]Outcome{},
		Children: map[string]string{}, Events: map[int64]Stamp{}}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for key, v := range s.st.journals[exec] {
		if err := j.add(key, v); err != nil {
			return nil, fmt.Errorf("durable: read journal %s: %w", exec, err)
		}
	}
	return j, nil
}

// add puts the journal entry key (with its kind's prefix) into j.
func (j *Journal) add(key string, v []byte) error {
	if len(key) <= 2 {
		return nil
	}
	switch key[:2] {
	case "c/":
		var c Call
		if err := json.Unmarshal(v, &c); err != nil {
			return err
		}
		j.Calls[key[2:]] = c
	case "o/":
		var o Outcome
		if err := json.Unmarshal(v, &o); err != nil {
			return err
		}
		j.Outcomes[key[2:]] = o
	case "t/":
		if len(v) == 8 {
			j.Timers[key[2:]] = decodeTime(v)
		}
	case "x/":
		j.Children[key[2:]] = string(v)
	case "e/":
		if len(v) < 8 {
			return nil
		}
		id, err := strconv.ParseInt(key[2:], 10, 64)
		if err != nil {
			return fmt.Errorf("event key %q: %w", key, err)
		}
		j.Events[id] = Stamp{At: decodeTime(v[:8]), Type: string(v[8:])}
	}
	return nil
}
