// Package durable keeps local mode's Step Functions state across restarts and crashes:
// state machines, executions (their records, and the history once closed), and, for every running
// execution, a journal of what it has done — each Lambda invocation's answer, each timer's deadline
// (Wait states, retry back-offs, task timeouts and heartbeats), each task token's answer, the name
// of each child execution it started and the time of each history event. After a restart the
// execution runs again from its start and the Recorder replays the journal: completed invocations
// are answered from it (nothing runs twice), timers end at their recorded deadlines, answers given
// to tokens are delivered again, a states:startExecution task finds the child it started before,
// events keep their first times, and tokens issued before the crash keep working as aliases of the
// new ones. The
// invocation that was running at the crash has no answer in the journal, so it runs again
// (at-least-once), which the executors' idempotency by call id absorbs.
//
// Journal writes are group commits. A completed invocation without a task token joins its
// execution's next durable write (and is durable before the execution makes another invocation,
// arms a Wait or back-off, starts a child, takes an answer, shows its history or its end), or the
// background writer's a moment later; an execution that ends first drops it in its closing
// record's transaction. A crash in between runs that invocation again, as one running at the crash
// does. An invocation that carried a task token is durable before the task waits on it.
//
// The store is one bbolt file: a pure-Go, single-file, transactional B+tree with fsync on commit,
// so a kill -9 at any point leaves the last committed state.
package durable

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	bMachines = []byte("machines")
	bExecs    = []byte("executions")
	bJournals = []byte("journals")
	bDefs     = []byte("definitions") // by SHA-256: a running execution's record names its definition
)

// Store is the durable state, safe for concurrent use.
type Store struct {
	db   *bolt.DB
	w    *committer
	defs sync.Map // SHA-256 keys of the definitions bDefs holds
}

// Open opens (or creates) the store file at path.
func Open(path string) (*Store, error) {
	// The freelist is not written with each commit (it is rebuilt from the file when opened): a
	// commit writes fewer pages before its fsync, and the file stays as durable.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, fmt.Errorf("durable: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bMachines, bExecs, bJournals, bDefs} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("durable: init %s: %w", path, err)
	}
	return &Store{db: db, w: &committer{db: db}}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

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
	// machine does not change a running execution, before or after a restart.
	Definition string          `json:"definition,omitempty"`
	Events     json.RawMessage `json:"events,omitempty"`
	// DefinitionRef names Definition in the store's definitions (the stored form of a running
	// record: many executions share a definition, which is written once, not with each start).
	DefinitionRef string `json:"definitionRef,omitempty"`
}

// PutMachine writes m.
func (s *Store) PutMachine(m Machine) error { return s.put(bMachines, m.Arn, m) }

// DeleteMachine removes a machine.
func (s *Store) DeleteMachine(arn string) error {
	return s.w.update(func(tx *bolt.Tx) error { return tx.Bucket(bMachines).Delete([]byte(arn)) })
}

// Machines lists every machine.
func (s *Store) Machines() ([]Machine, error) {
	var out []Machine
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bMachines).ForEach(func(_, v []byte) error {
			var m Machine
			if err := json.Unmarshal(v, &m); err != nil {
				return err
			}
			out = append(out, m)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("durable: list machines: %w", err)
	}
	return out, nil
}

// PutExecution writes an execution's record. A running record opens the execution's journal; a
// closed record (Events set) drops it in the same transaction: nothing of it is replayed again (and
// background journal writes that come later find no journal to write to).
func (s *Store) PutExecution(x Execution) error {
	def := x.Definition
	if def != "" {
		sum := sha256.Sum256([]byte(def))
		x.DefinitionRef, x.Definition = hex.EncodeToString(sum[:]), ""
	}
	data, err := json.Marshal(x)
	if err != nil {
		return fmt.Errorf("durable: encode execution: %w", err)
	}
	_, known := s.defs.Load(x.DefinitionRef)
	err = s.w.update(func(tx *bolt.Tx) error {
		if def != "" && !known {
			if err := tx.Bucket(bDefs).Put([]byte(x.DefinitionRef), []byte(def)); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bExecs).Put([]byte(x.Arn), data); err != nil {
			return err
		}
		if x.Events != nil {
			if err := tx.Bucket(bJournals).DeleteBucket([]byte(x.Arn)); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
				return err
			}
			return nil
		}
		_, err := tx.Bucket(bJournals).CreateBucketIfNotExists([]byte(x.Arn))
		return err
	})
	if err != nil {
		return fmt.Errorf("durable: write execution %s: %w", x.Arn, err)
	}
	if def != "" {
		s.defs.Store(x.DefinitionRef, true)
	}
	return nil
}

// DeleteExecution removes an execution and its journal (a start that the engine refused).
func (s *Store) DeleteExecution(arn string) error {
	return s.w.update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bJournals).DeleteBucket([]byte(arn)); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
			return err
		}
		return tx.Bucket(bExecs).Delete([]byte(arn))
	})
}

// Executions lists every execution record, without their events (ExecutionEvents reads them).
func (s *Store) Executions() ([]Execution, error) {
	var out []Execution
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bExecs).ForEach(func(_, v []byte) error {
			var x Execution
			if err := json.Unmarshal(v, &x); err != nil {
				return err
			}
			x.Events = nil
			if x.DefinitionRef != "" {
				def := tx.Bucket(bDefs).Get([]byte(x.DefinitionRef))
				if def == nil {
					return fmt.Errorf("execution %s: its definition %s is missing", x.Arn, x.DefinitionRef)
				}
				x.Definition, x.DefinitionRef = string(def), ""
			}
			out = append(out, x)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("durable: list executions: %w", err)
	}
	return out, nil
}

// ExecutionEvents gives a closed execution's history as JSON (nil while it runs).
func (s *Store) ExecutionEvents(arn string) (json.RawMessage, error) {
	var x Execution
	found, err := s.get(bExecs, arn, &x)
	if err != nil || !found {
		return nil, err
	}
	return x.Events, nil
}

func (s *Store) put(bucket []byte, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("durable: encode %s: %w", key, err)
	}
	err = s.w.update(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put([]byte(key), data) })
	if err != nil {
		return fmt.Errorf("durable: write %s: %w", key, err)
	}
	return nil
}

func (s *Store) get(bucket []byte, key string, v any) (bool, error) {
	var data []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		if d := tx.Bucket(bucket).Get([]byte(key)); d != nil {
			data = append([]byte(nil), d...)
		}
		return nil
	})
	if err != nil || data == nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("durable: decode %s: %w", key, err)
	}
	return true, nil
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
	err := s.w.update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bJournals).CreateBucketIfNotExists([]byte(exec))
		if err != nil {
			return err
		}
		return b.Put([]byte(key), v)
	})
	if err != nil {
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

// recordLate writes journal entries (full keys) of many executions in one transaction, into
// journals that exist: an execution that has closed meanwhile keeps none.
func (s *Store) recordLate(entries map[string]map[string][]byte) error {
	err := s.w.update(func(tx *bolt.Tx) error {
		for exec, kv := range entries {
			b := tx.Bucket(bJournals).Bucket([]byte(exec))
			if b == nil {
				continue
			}
			for k, v := range kv {
				if err := b.Put([]byte(k), v); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
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
	return s.w.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bJournals).Bucket([]byte(exec))
		if b == nil {
			return nil
		}
		return b.Delete([]byte("o/" + key))
	})
}

// LoadJournal reads an execution's journal (empty when it has none).
func (s *Store) LoadJournal(exec string) (*Journal, error) {
	j := &Journal{Calls: map[string]Call{}, Timers: map[string]time.Time{}, Outcomes: map[string]Outcome{},
		Children: map[string]string{}, Events: map[int64]Stamp{}}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bJournals).Bucket([]byte(exec))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			key := string(k)
			switch {
			case len(key) > 2 && key[:2] == "c/":
				var c Call
				if err := json.Unmarshal(v, &c); err != nil {
					return err
				}
				j.Calls[key[2:]] = c
			case len(key) > 2 && key[:2] == "o/":
				var o Outcome
				if err := json.Unmarshal(v, &o); err != nil {
					return err
				}
				j.Outcomes[key[2:]] = o
			case len(key) > 2 && key[:2] == "t/" && len(v) == 8:
				j.Timers[key[2:]] = decodeTime(v)
			case len(key) > 2 && key[:2] == "x/":
				j.Children[key[2:]] = string(v)
			case len(key) > 2 && key[:2] == "e/" && len(v) >= 8:
				id, err := strconv.ParseInt(key[2:], 10, 64)
				if err != nil {
					return fmt.Errorf("event key %q: %w", key, err)
				}
				j.Events[id] = Stamp{At: decodeTime(v[:8]), Type: string(v[8:])}
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("durable: read journal %s: %w", exec, err)
	}
	return j, nil
}
