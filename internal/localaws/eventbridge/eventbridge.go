// Package eventbridge is local mode's stand-in for EventBridge's PutEvents.
//
// It speaks the JSON 1.1 protocol (`X-Amz-Target: AWSEvents.PutEvents`), validated as AWS validates
// it, with every accepted event appended to a feed — an append-only JSON-lines file under the local
// directory that users read. Events reach handlers, matched with EventBridge patterns, two ways:
// durable targets (AddTarget: the rule targets local mode routes Step Functions' "Execution Status
// Change" to), whose events are journaled before PutEvents answers and delivered, with
// EventBridge's retry policy and a dead-letter file, across crashes and restarts; and in-memory
// subscribers (Subscribe), which see only what is put while they listen.
package eventbridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"sinew/internal/localaws/awsjson"
	"sinew/internal/localaws/outbox"
)

// FeedFileName is the feed's file under the local directory.
const FeedFileName = "events.jsonl"

// PutEvents limits.
const (
	MaxEntries   = 10
	MaxTotalSize = 256 << 10 // the sum of the entries' sizes, computed as AWS documents
	// maxBody bounds the request: entries within MaxTotalSize, JSON-escaped, fit well inside it.
	maxBody = 2 << 20
)

// Event is an event in EventBridge's delivered envelope: marshalled, it is exactly what a rule's
// target receives.
type Event struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// FeedEntry is one line of the feed: the envelope and the bus it was put on.
type FeedEntry struct {
	EventBusName string `json:"event-bus-name"`
	Event
}

// Options configure a Service.
type Options struct {
	Dir     string   // the local directory holding the feed (required)
	Region  string   // default us-east-1
	Account string   // default 000000000000
	Buses   []string // buses besides "default" (e.g. SINEW_EVENT_BUS's)
	Logger  *slog.Logger
	Now     func() time.Time
}

// Service is the PutEvents endpoint and the feed. It is safe for concurrent use.
type Service struct {
	region, account string
	buses           map[string]bool
	path            string
	log             *slog.Logger
	now             func() time.Time
	http            *awsjson.Service

	mu     sync.Mutex // serialises appends to the feed file and the subscriber list
	feed   *os.File   // the feed, open for appending from the first event until Close
	subs   map[*subscriber]struct{}
	closed bool // no target can be added

	targets map[string]Rule // the durable targets' rules, by name (s.mu)
	outbox  *outbox.Outbox  // the events they have still to receive
}

// Open prepares the feed under opts.Dir (the file is created on the first event) and reads the
// journal: the events it holds are delivered to their targets once those are added again.
func Open(opts Options) (*Service, error) {
	if opts.Dir == "" {
		return nil, errors.New("eventbridge: Options.Dir is required")
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("eventbridge: create local directory: %w", err)
	}
	s := &Service{
		region:  opts.Region,
		account: opts.Account,
		buses:   map[string]bool{"default": true},
		path:    filepath.Join(opts.Dir, FeedFileName),
		log:     opts.Logger,
		now:     opts.Now,
		subs:    map[*subscriber]struct{}{},
		targets: map[string]Rule{},
	}
	if s.region == "" {
		s.region = "us-east-1"
	}
	if s.account == "" {
		s.account = "000000000000"
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	for _, b := range opts.Buses {
		if b == "" || len(b) > 256 || strings.ContainsAny(b, "/ ") {
			return nil, fmt.Errorf("eventbridge: bus name %q is not valid", b)
		}
		s.buses[b] = true
	}
	var err error
	s.outbox, err = outbox.Open(filepath.Join(opts.Dir, JournalFileName), outbox.Options{
		DeadLetterPath: filepath.Join(opts.Dir, DeadLetterFileName), Logger: s.log, Now: s.now})
	if err != nil {
		return nil, fmt.Errorf("eventbridge: %w", err)
	}
	s.http = &awsjson.Service{
		Name:         "events",
		TargetPrefix: "AWSEvents",
		ContentType:  "application/x-amz-json-1.1",
		MaxBody:      maxBody,
		TooLargeType: "ValidationException",
		InternalType: "InternalException",
		Log:          s.log,
		Ops:          map[string]awsjson.Op{"PutEvents": s.putEvents},
	}
	return s, nil
}

// ServeHTTP answers EventBridge API requests.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.http.ServeHTTP(w, r) }

// FeedPath is the feed file's path.
func (s *Service) FeedPath() string { return s.path }

type putEventsRequest struct {
	Entries    []requestEntry `json:"Entries"`
	EndpointID string         `json:"EndpointId"`
}

type requestEntry struct {
	Time         *float64 `json:"Time"` // epoch seconds, as the JSON protocol sends timestamps
	Source       string   `json:"Source"`
	Resources    []string `json:"Resources"`
	DetailType   string   `json:"DetailType"`
	Detail       string   `json:"Detail"`
	EventBusName string   `json:"EventBusName"`
	TraceHeader  string   `json:"TraceHeader"`
}

type resultEntry struct {
	EventID      string `json:"EventId,omitempty"`
	ErrorCode    string `json:"ErrorCode,omitempty"`
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

type putEventsResponse struct {
	FailedEntryCount int           `json:"FailedEntryCount"`
	Entries          []resultEntry `json:"Entries"`
}

// entrySize is AWS's documented size of a PutEvents entry.
func entrySize(e requestEntry) int {
	n := len(e.Source) + len(e.DetailType) + len(e.Detail)
	if e.Time != nil {
		n += 14
	}
	for _, r := range e.Resources {
		n += len(r)
	}
	return n
}

func (s *Service) putEvents(ctx context.Context, body []byte) (any, error) {
	var req putEventsRequest
	if err := awsjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	switch {
	case req.Entries == nil:
		return nil, awsjson.Validation("1 validation error detected: Value null at 'entries' failed to satisfy constraint: Member must not be null")
	case len(req.Entries) == 0:
		return nil, awsjson.Validation("1 validation error detected: Value '[]' at 'entries' failed to satisfy constraint: Member must have length greater than or equal to 1")
	case len(req.Entries) > MaxEntries:
		return nil, awsjson.Validation("1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to %d", MaxEntries)
	}
	total := 0
	for _, e := range req.Entries {
		total += entrySize(e)
	}
	if total > MaxTotalSize {
		return nil, awsjson.Validation("Total size of the entries in the request is over the limit.")
	}

	now := s.now().UTC()
	out := putEventsResponse{Entries: make([]resultEntry, len(req.Entries))}
	var accepted []FeedEntry
	for i, e := range req.Entries {
		fe, code, msg := s.toEvent(e, now)
		if code == "" && reservedSource(e.Source) {
			code, msg = "NotAuthorizedForSourceException", "Not authorized for the source."
		}
		if code != "" {
			out.Entries[i] = resultEntry{ErrorCode: code, ErrorMessage: msg}
			out.FailedEntryCount++
			continue
		}
		out.Entries[i] = resultEntry{EventID: fe.ID}
		accepted = append(accepted, fe)
	}
	if err := s.publish(accepted); err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "events put", "entries", len(req.Entries), "failed", out.FailedEntryCount)
	return out, nil
}

// reservedSource reports a source only AWS services may put: as in AWS, PutEvents refuses
// "aws.*" sources, so no caller can forge a Step Functions Execution Status Change and have the
// settle function record another developer's execution as ended. Local mode's own engine emits
// those through Put, which is not reachable over HTTP.
func reservedSource(source string) bool { return strings.HasPrefix(source, "aws.") }

// toEvent validates one entry as AWS does, answering a per-entry error code and message, or the
// event.
func (s *Service) toEvent(e requestEntry, now time.Time) (FeedEntry, string, string) {
	switch {
	case e.Source == "":
		return FeedEntry{}, "InvalidArgument", "Parameter Source is not valid. Reason: Source is a required argument."
	case e.DetailType == "":
		return FeedEntry{}, "InvalidArgument", "Parameter DetailType is not valid. Reason: DetailType is a required argument."
	case e.Detail == "":
		return FeedEntry{}, "InvalidArgument", "Parameter Detail is not valid. Reason: Detail is a required argument."
	}
	detail := bytes.TrimSpace([]byte(e.Detail))
	if len(detail) == 0 || detail[0] != '{' || !json.Valid(detail) {
		return FeedEntry{}, "MalformedDetail", "Detail is malformed."
	}
	bus, ok := s.busName(e.EventBusName)
	if !ok {
		return FeedEntry{}, "InvalidArgument", fmt.Sprintf("Event bus %s does not exist.", awsjson.Clip(e.EventBusName, 256))
	}
	at := now
	if e.Time != nil {
		if math.IsNaN(*e.Time) || math.IsInf(*e.Time, 0) || *e.Time < 0 || *e.Time > 253402300799 {
			return FeedEntry{}, "InvalidArgument", "Parameter Time is not valid."
		}
		sec, frac := math.Modf(*e.Time)
		at = time.Unix(int64(sec), int64(frac*1e9)).UTC()
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, detail); err != nil {
		return FeedEntry{}, "MalformedDetail", "Detail is malformed."
	}
	resources := e.Resources
	if resources == nil {
		resources = []string{}
	}
	return FeedEntry{EventBusName: bus, Event: Event{
		Version: "0", ID: uuid.NewString(), DetailType: e.DetailType, Source: e.Source, Account: s.account,
		Time: at.Format("2006-01-02T15:04:05Z"), Region: s.region, Resources: resources, Detail: compact.Bytes(),
	}}, "", ""
}

// busName resolves an EventBusName (a name or an ARN; empty is the default bus).
func (s *Service) busName(ref string) (string, bool) {
	if ref == "" {
		return "default", true
	}
	name := ref
	if strings.HasPrefix(ref, "arn:") {
		prefix := "arn:aws:events:" + s.region + ":" + s.account + ":event-bus/"
		var ok bool
		if name, ok = strings.CutPrefix(ref, prefix); !ok {
			return "", false
		}
	}
	return name, s.buses[name]
}

// publish appends the events to the feed file, journals those that durable targets match, then
// hands them to matching subscribers; once the journal is durable it answers, and the targets'
// deliveries start. The file comes first: an event a handler saw is always in the feed.
func (s *Service) publish(events []FeedEntry) error {
	if len(events) == 0 {
		return nil
	}
	var buf bytes.Buffer
	lines := make([][]byte, len(events))
	for i, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode event: %w", err)
		}
		lines[i] = line
		buf.Write(line)
		buf.WriteByte('\n')
	}
	// The envelope as patterns see it is made once per event, from its feed line, for all the
	// subscribers and targets: made for each subscriber from a second encoding, it was 3% of
	// local mode's CPU under load.
	envs := make([]map[string]any, len(events))
	envelope := func(i int) func() map[string]any {
		return func() map[string]any {
			if envs[i] == nil {
				envs[i] = envelopeMap(lines[i])
			}
			return envs[i]
		}
	}
	s.mu.Lock()
	if err := s.appendFeed(buf.Bytes()); err != nil {
		s.mu.Unlock()
		return err
	}
	durable := s.journalFor(events, lines, envelope)
	for sub := range s.subs {
		for i, e := range events {
			sub.offer(e, envelope(i))
		}
	}
	s.mu.Unlock()
	if err := s.outbox.Put(durable...); err != nil {
		return fmt.Errorf("eventbridge: journal events: %w", err)
	}
	return nil
}

// appendFeed writes to the feed file (s.mu held). The file stays open: opening and closing it
// for every event was 2% of local mode's CPU under load.
func (s *Service) appendFeed(b []byte) error {
	if s.feed == nil {
		f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("open event feed: %w", err)
		}
		s.feed = f
	}
	if _, err := s.feed.Write(b); err != nil {
		return fmt.Errorf("append to event feed: %w", err)
	}
	return nil
}

// Close stops the targets' deliveries (those under way stay journaled, for the next start),
// closes the journal and the feed file; an event published after Close opens the feed again, and
// is journaled for no target.
func (s *Service) Close() error {
	s.mu.Lock()
	s.closed, s.targets = true, map[string]Rule{}
	s.mu.Unlock()
	err := s.outbox.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.feed == nil {
		return err
	}
	err = errors.Join(err, s.feed.Close())
	s.feed = nil
	return err
}

// Put publishes events directly, for local mode's own emitters (the Step Functions engine's
// "Execution Status Change" events) that do not go through the HTTP API. The entry is validated as
// PutEvents validates it; the result is the event's id.
func (s *Service) Put(ctx context.Context, bus, source, detailType string, detail json.RawMessage, resources []string) (string, error) {
	fe, code, msg := s.toEvent(requestEntry{Source: source, DetailType: detailType, Detail: string(detail), EventBusName: bus, Resources: resources}, s.now().UTC())
	if code != "" {
		return "", fmt.Errorf("eventbridge: %s: %s", code, msg)
	}
	if err := s.publish([]FeedEntry{fe}); err != nil {
		return "", err
	}
	return fe.ID, nil
}

// Rule selects events for a subscriber: the bus they were put on and an EventBridge pattern.
type Rule struct {
	Bus     string // "" is the default bus
	Pattern Pattern
}

type subscriber struct {
	rule   Rule
	mu     sync.Mutex
	queue  []Event
	notify chan struct{}
}

// matches reports whether an event put on its bus matches the rule.
func (r Rule) matches(fe FeedEntry, envelope func() map[string]any) bool {
	bus := r.Bus
	if bus == "" {
		bus = "default"
	}
	return fe.EventBusName == bus && r.Pattern.Match(envelope())
}

// offer queues e if it matches. Queues are unbounded so a slow handler never blocks PutEvents or
// loses an event; local mode's event volume is a person's.
func (sub *subscriber) offer(fe FeedEntry, envelope func() map[string]any) {
	if !sub.rule.matches(fe, envelope) {
		return
	}
	sub.mu.Lock()
	sub.queue = append(sub.queue, fe.Event)
	sub.mu.Unlock()
	select {
	case sub.notify <- struct{}{}:
	default:
	}
}

// envelopeMap is the event as a pattern sees it, from its feed line: the envelope with its detail
// parsed, without the feed's bus name. A pattern only reads it; it is shared.
func envelopeMap(line []byte) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil
	}
	delete(m, "event-bus-name")
	return m
}

// Subscribe delivers, in order, every event published after the call that matches rule, until ctx
// ends; then the channel is closed.
func (s *Service) Subscribe(ctx context.Context, rule Rule) <-chan Event {
	sub := &subscriber{rule: rule, notify: make(chan struct{}, 1)}
	s.mu.Lock()
	s.subs[sub] = struct{}{}
	s.mu.Unlock()
	out := make(chan Event)
	go func() {
		defer close(out)
		defer func() {
			s.mu.Lock()
			delete(s.subs, sub)
			s.mu.Unlock()
		}()
		for {
			sub.mu.Lock()
			var next *Event
			if len(sub.queue) > 0 {
				e := sub.queue[0]
				sub.queue = sub.queue[1:]
				next = &e
			}
			sub.mu.Unlock()
			if next == nil {
				select {
				case <-sub.notify:
					continue
				case <-ctx.Done():
					return
				}
			}
			select {
			case out <- *next:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// Feed reads this service's feed file.
func (s *Service) Feed() ([]FeedEntry, error) { return ReadFeedFile(s.path) }

// ReadFeedFile reads the feed at path; a missing file is an empty feed.
func ReadFeedFile(path string) ([]FeedEntry, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open event feed: %w", err)
	}
	defer f.Close()
	return ReadFeed(f)
}

// ReadFeed reads feed lines from r. A last line without its newline (a write cut short by a crash)
// is skipped; a bad line elsewhere is an error naming it.
func ReadFeed(r io.Reader) ([]FeedEntry, error) {
	br := bufio.NewReader(r)
	var out []FeedEntry
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return out, nil // complete lines end in '\n'; anything after the last one is a torn write
		}
		if err != nil {
			return out, fmt.Errorf("read event feed: %w", err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e FeedEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return out, fmt.Errorf("event feed line %d is not an event: %w", n, err)
		}
		out = append(out, e)
	}
}
