// Package iamrec is the run-time evidence of what sinew's code asks AWS.
//
// Local mode (infra/local) writes each AWS request its functions, and its Step Functions engine on
// a state machine's behalf, send as the IAM authorization requests AWS would make of them (Request:
// principal, action, resource, condition context), and the IAM check (infra/scripts/iamcheck)
// evaluates them against the policies a synthesized stack holds.
package iamrec

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// EnvRecord names the directory local mode records into; unset, nothing is recorded and no
// recording code runs.
const EnvRecord = "SINEW_LOCAL_IAM_RECORD"

// Who makes a request.
const (
	PrincipalFunction     = "function"      // a function's execution role (internal/deploy's name)
	PrincipalStateMachine = "state-machine" // a state machine's role, for what its engine does
	PrincipalService      = "service"       // an AWS service acting for a resource (aws:SourceArn)
)

// Request is one authorization IAM makes for a request sent to AWS: an API call authorized as
// several actions or on several resources (a transaction's items, a batch over tables, ReEncrypt's
// two keys) is one Request each.
type Request struct {
	Principal     string `json:"principal"`      // a function's or state machine's name, or a service principal
	PrincipalType string `json:"principal_type"` // PrincipalFunction, PrincipalStateMachine or PrincipalService
	Service       string `json:"service"`        // the IAM service prefix: dynamodb, kms, states, ...
	Operation     string `json:"op"`             // the API operation sent (TransactWriteItems, ReEncrypt, ...)
	Action        string `json:"action"`         // the IAM action: dynamodb:PutItem
	Resource      string `json:"resource"`       // its ARN; "*" for an action on no resource; "" when not known
	// Context is the condition context IAM would see: each key's value a string or a list of strings.
	Context map[string]any `json:"context,omitempty"`
	// KeyAliases are a KMS key's aliases: the key's ARN differs with each local data directory, its
	// alias is the name local mode gives it (localnames.SecretsKeyAlias).
	KeyAliases []string `json:"key_aliases,omitempty"`
	// Underived marks an operation Derive does not know: its action is a guess and its resource unknown.
	Underived bool `json:"underived,omitempty"`
}

// Writer appends Requests as JSON lines to <dir>/<pid>.jsonl, one write per call, so lines from
// concurrent requests never interleave and a process killed mid-run leaves whole lines.
type Writer struct {
	mu  sync.Mutex
	f   *os.File
	err error // the first write error, reported once
}

// Open makes dir (0700) and opens this process's file in it (0600: the lines hold developer ids and
// resource names).
func Open(dir string) (*Writer, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("%s: %w", EnvRecord, err)
	}
	f, err := os.OpenFile(filepath.Join(abs, strconv.Itoa(os.Getpid())+".jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvRecord, err)
	}
	return &Writer{f: f}, nil
}

// Write appends rs; the first failure is returned once and later ones dropped, so a full disk does
// not fail the requests being recorded.
func (w *Writer) Write(rs ...Request) error {
	if len(rs) == 0 {
		return nil
	}
	var b strings.Builder
	for _, r := range rs {
		data, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return nil
	}
	if _, err := w.f.WriteString(b.String()); err != nil {
		w.err = err
		return fmt.Errorf("%s: %w", EnvRecord, err)
	}
	return nil
}

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }

// ReadDir reads every *.jsonl file of dir; files is how many there were.
func ReadDir(dir string) (rs []Request, files int, err error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, 0, err
	}
	for _, p := range paths {
		got, err := readFile(p)
		if err != nil {
			return nil, 0, err
		}
		rs = append(rs, got...)
	}
	return rs, len(paths), nil
}

func readFile(path string) ([]Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rs []Request
	var bad error // a line that did not parse: an error unless it is the last
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		if bad != nil {
			return nil, bad
		}
		var r Request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			// A process killed mid-write leaves at most its last line partial.
			bad = fmt.Errorf("%s:%d: %w", path, n, err)
			continue
		}
		rs = append(rs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rs, nil
}
