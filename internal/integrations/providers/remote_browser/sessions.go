package remotebrowser

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// sessions drives the targets that the browser attaches to sinew by itself (CDP's auto-attach,
// each target paused until it is set up): every page, frame in another process, worker and service
// worker. The browser-wide Fetch interception misses requests of documents loaded before this call
// and those that service and shared workers make themselves, so each target pauses its requests
// for the guard on its own session too; a shared worker that ran before the call cannot be made to
// (the browser gives a running one no new interception), so it is stopped. No interception can
// pause a WebSocket: a page's or a frame's are emulated offline, and a worker is left without the
// constructors.
//
// chromedp drops the messages of sessions it did not attach itself, so the connection hands every
// message here first (take) and chromedp reads only the rest; the commands chromedp sends pass
// here too (sent), so that its own attachments are never taken for these.
type sessions struct {
	conn  *wsConn
	guard *pageGuard
	log   *slog.Logger
	next  atomic.Int64 // this side's command ids, far above chromedp's

	ctx       context.Context // the work below ends with it
	mu        sync.Mutex
	ours      map[target.SessionID]bool
	theirs    map[target.SessionID]bool // chromedp's own attachments
	attaching map[int64]target.ID       // chromedp's Target.attachToTarget commands awaiting a reply
	deferred  map[target.ID][]target.EventAttachedToTarget
	replies   map[int64]chan *cdproto.Message
	setting   int // targets being set up
	wg        sync.WaitGroup
}

// firstID leaves chromedp's ids (counted from 1 in each call) room enough never to meet these,
// and stays in the 32-bit range that the browser reads ids in.
const firstID = 1 << 30

// wsOffline makes a target's WebSockets fail before any handshake is sent.
var wsOffline = network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: []*network.Conditions{
	{URLPattern: "ws://*:*/*", Offline: true, DownloadThroughput: -1, UploadThroughput: -1},
	{URLPattern: "wss://*:*/*", Offline: true, DownloadThroughput: -1, UploadThroughput: -1},
}}

// noWebSockets takes the WebSocket constructors from a worker's global scope, for good: the
// properties can be neither written nor defined again.
const noWebSockets = `for (const name of ["WebSocket", "WebSocketStream"]) {
  Object.defineProperty(self, name, {value: undefined, writable: false, configurable: false, enumerable: false});
}`

// childFilter leaves service and shared workers, which belong to no one frame, to the browser-wide
// auto-attach, so that none is attached twice.
var childFilter = target.Filter{{Type: "service_worker", Exclude: true}, {Type: "shared_worker", Exclude: true}, {}}

// newSessions hands conn's messages to a new side whose work runs under ctx; stop waits for that
// work once ctx is done.
func newSessions(ctx context.Context, conn *wsConn, guard *pageGuard, log *slog.Logger) *sessions {
	s := &sessions{ctx: ctx, conn: conn, guard: guard, log: log, ours: map[target.SessionID]bool{}, theirs: map[target.SessionID]bool{},
		attaching: map[int64]target.ID{}, deferred: map[target.ID][]target.EventAttachedToTarget{}, replies: map[int64]chan *cdproto.Message{}}
	s.next.Store(firstID)
	conn.side = s
	return s
}

func (s *sessions) stop() { s.wg.Wait() }

// sent notes a command of chromedp's before it goes out: its attachments are its own.
func (s *sessions) sent(msg *cdproto.Message) {
	if msg.Method != target.CommandAttachToTarget || msg.SessionID != "" {
		return
	}
	var p target.AttachToTargetParams
	if jsonv2.Unmarshal(msg.Params, &p, chromedp.DefaultUnmarshalOptions) == nil {
		s.mu.Lock()
		s.attaching[msg.ID] = p.TargetID
		s.mu.Unlock()
	}
}

// take handles msg if it belongs to this side, and reports whether it did.
func (s *sessions) take(msg *cdproto.Message) bool {
	switch {
	case msg.Method == "" && msg.ID != 0:
		return s.reply(msg)
	case msg.Method == cdproto.MethodType(target.AttachedToTarget.Method):
		return s.attached(msg)
	case msg.Method == cdproto.MethodType(target.DetachedFromTarget.Method):
		var ev target.EventDetachedFromTarget
		_ = jsonv2.Unmarshal(msg.Params, &ev, chromedp.DefaultUnmarshalOptions)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.ours[ev.SessionID] || s.ours[msg.SessionID] {
			delete(s.ours, ev.SessionID)
			return true
		}
		return false
	}
	s.mu.Lock()
	ours := msg.SessionID != "" && s.ours[msg.SessionID]
	s.mu.Unlock()
	if ours && msg.Method == cdproto.MethodType(fetch.RequestPaused.Method) {
		var ev fetch.EventRequestPaused
		if jsonv2.Unmarshal(msg.Params, &ev, chromedp.DefaultUnmarshalOptions) == nil {
			sess := session{s, msg.SessionID}
			s.wg.Go(func() { s.guard.decide(s.ctx, sess, &ev) })
		}
	}
	return ours
}

// reply routes the answer to a command of this side's, and learns the session of each of chromedp's
// attachments.
func (s *sessions) reply(msg *cdproto.Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.replies[msg.ID]; ok {
		delete(s.replies, msg.ID)
		ch <- msg
		return true
	}
	tid, ok := s.attaching[msg.ID]
	if !ok {
		return msg.ID >= firstID // a reply that came after its caller gave up
	}
	delete(s.attaching, msg.ID)
	var res target.AttachToTargetResult
	if msg.Error == nil && jsonv2.Unmarshal(msg.Result, &res, chromedp.DefaultUnmarshalOptions) == nil {
		s.theirs[res.SessionID] = true
	}
	for _, ev := range s.deferred[tid] {
		if !s.theirs[ev.SessionID] {
			s.adoptLocked(ev)
		}
	}
	delete(s.deferred, tid)
	return false
}

// attached adopts a session that the browser attached by itself: to the browser (auto-attach on
// the browser target) or to one of this side's sessions (their frames and workers). Children of
// chromedp's page session are chromedp's; an attachment that chromedp asked for is told apart by
// its reply, so one announced while such a command is in flight waits for that reply.
func (s *sessions) attached(msg *cdproto.Message) bool {
	var ev target.EventAttachedToTarget
	if jsonv2.Unmarshal(msg.Params, &ev, chromedp.DefaultUnmarshalOptions) != nil || ev.TargetInfo == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case msg.SessionID != "" && !s.ours[msg.SessionID]:
		return false
	case s.theirs[ev.SessionID]:
		return false
	}
	for _, tid := range s.attaching {
		if msg.SessionID == "" && tid == ev.TargetInfo.TargetID {
			s.deferred[tid] = append(s.deferred[tid], ev)
			return true
		}
	}
	s.adoptLocked(ev)
	return true
}

// adoptLocked takes the session and sets its target up; s.mu is held.
func (s *sessions) adoptLocked(ev target.EventAttachedToTarget) {
	s.ours[ev.SessionID] = true
	s.setting++
	s.wg.Go(func() {
		s.setUp(s.ctx, ev)
		s.mu.Lock()
		s.setting--
		s.mu.Unlock()
	})
}

// ready waits until every target attached so far is set up: a target that ran already when
// sinew connected (a service worker, say) is guarded before the action starts. A target's own
// frames and workers are attached before its set-up ends, so none slips between.
func (s *sessions) ready(ctx context.Context) error {
	for {
		s.mu.Lock()
		n := s.setting
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// setUp makes the target's WebSockets fail, pauses its requests for the guard, attaches to its own
// frames and workers (paused in turn), and only then lets it run. A step that fails leaves the
// target less guarded than the rest, and is logged.
func (s *sessions) setUp(ctx context.Context, ev target.EventAttachedToTarget) {
	sess := session{s, ev.SessionID}
	typ := ev.TargetInfo.Type
	step := func(what, method string, params any) {
		on := sess
		if method == target.CommandCloseTarget {
			on = session{s, ""} // the browser's own
		}
		if err := on.Call(ctx, method, params, nil); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "remote_browser: could not guard a target", "type", typ, "step", what, "err", err)
		}
	}
	if typ == "shared_worker" && !ev.WaitingForDebugger {
		// It ran before sinew connected, and the browser lets no client pause the requests of a
		// shared worker that runs already: it stops (its pages may start it again, guarded).
		step("stop", target.CommandCloseTarget, target.CloseTargetParams{TargetID: ev.TargetInfo.TargetID})
		return
	}
	step("websockets", network.CommandEmulateNetworkConditionsByRule, wsOffline)
	if typ != "worker" { // a dedicated worker's requests are its frame's, paused there
		step("requests", fetch.CommandEnable, fetch.EnableParams{})
	}
	switch typ {
	case "worker", "shared_worker", "service_worker":
		// The browser emulates network conditions for frames' WebSockets only.
		step("worker websockets", runtime.CommandEvaluate, runtime.EvaluateParams{Expression: noWebSockets})
	}
	if typ != "service_worker" {
		flat := true
		step("auto-attach", target.CommandSetAutoAttach, target.SetAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: &flat, Filter: childFilter})
	}
	if ev.WaitingForDebugger {
		step("resume", runtime.CommandRunIfWaitingForDebugger, nil)
	}
}

// session is one of this side's sessions, for calls on it.
type session struct {
	s  *sessions
	id target.SessionID
}

func (x session) Call(ctx context.Context, method string, params, res any) error {
	s := x.s
	id := s.next.Add(1)
	ch := make(chan *cdproto.Message, 1)
	s.mu.Lock()
	s.replies[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.replies, id)
		s.mu.Unlock()
	}()
	msg := &cdproto.Message{ID: id, SessionID: x.id, Method: cdproto.MethodType(method)}
	if params != nil {
		b, err := jsonv2.Marshal(params, chromedp.DefaultMarshalOptions)
		if err != nil {
			return err
		}
		msg.Params = b
	}
	if err := s.conn.write(msg); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case m := <-ch:
		if m.Error != nil {
			return m.Error
		}
		if res != nil && len(m.Result) > 0 {
			return jsonv2.Unmarshal(m.Result, res, chromedp.DefaultUnmarshalOptions)
		}
		return nil
	}
}
