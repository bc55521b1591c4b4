package sfnapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"sinew/internal/asl"
	"sinew/internal/localaws/awsjson"
	"sinew/internal/localaws/durable"
)

// paging: a nextToken is the offset into the (stable) listing, encoded opaquely.
func page(token string, maxResults, total int) (start, end int, next string, err error) {
	if maxResults < 0 || maxResults > maxPage {
		return 0, 0, "", awsjson.Validation("1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to %d", maxResults, maxPage)
	}
	if maxResults == 0 {
		maxResults = defaultPage
	}
	if token != "" {
		raw, derr := base64.RawURLEncoding.DecodeString(token)
		n, perr := strconv.Atoi(strings.TrimPrefix(string(raw), "o:"))
		if derr != nil || perr != nil || !strings.HasPrefix(string(raw), "o:") || n < 0 || n > total {
			return 0, 0, "", apiErr("InvalidToken", "Invalid Token: 'Invalid token'")
		}
		start = n
	}
	end = min(start+maxResults, total)
	if end < total {
		next = base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(end)))
	}
	return start, end, next, nil
}

type startReq struct {
	Arn   string  `json:"stateMachineArn"`
	Name  string  `json:"name"`
	Input *string `json:"input"`
}

func (s *Service) decodeStart(body []byte) (startReq, *machine, string, error) {
	var in startReq
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return in, nil, "", err
	}
	m, err := s.lookupMachine(in.Arn)
	if err != nil {
		return in, nil, "", err
	}
	if in.Name != "" {
		if err := checkName(in.Name); err != nil {
			return in, nil, "", err
		}
	}
	input := "{}"
	if in.Input != nil {
		input = *in.Input
	}
	if len(input) > asl.MaxPayloadBytes {
		return in, nil, "", tooLong("input", asl.MaxPayloadBytes)
	}
	if err := checkJSON(input); err != nil {
		return in, nil, "", apiErr("InvalidExecutionInput", "Invalid State Machine Execution Input: '%s'", err.Error())
	}
	return in, m, input, nil
}

func (s *Service) startExecution(ctx context.Context, body []byte) (any, error) {
	in, m, input, err := s.decodeStart(body)
	if err != nil {
		return nil, err
	}
	if m.rec.Type == "EXPRESS" {
		// An asynchronous Express execution: run at least once, with no history (as AWS).
		return s.startExpressAsync(ctx, m, in.Name, input)
	}
	name := orName(in.Name)
	arn := strings.Replace(m.rec.Arn, ":stateMachine:", ":execution:", 1) + ":" + name
	s.mu.Lock()
	if e, ok := s.execs[arn]; ok {
		s.mu.Unlock()
		e.mu.Lock()
		rec := e.rec
		e.mu.Unlock()
		// The same name and input while it runs is the same execution; otherwise a clash, as AWS.
		if rec.Status == asl.StatusRunning && rec.Input == input {
			return map[string]any{"executionArn": arn, "startDate": epoch(rec.Start)}, nil
		}
		return nil, apiErr("ExecutionAlreadyExists", "Execution Already Exists: '%s'", arn)
	}
	e := &execution{rec: s.startRecord(m, arn, name, input), resumed: true, announced: make(chan struct{})}
	s.execs[arn] = e
	s.mu.Unlock()
	started := e.rec
	// Written before it runs: a kill -9 from here on resumes it. It is durable before the start
	// is answered; a short execution's end shares that fdatasync.
	frame, err := s.opts.Store.StageExecution(e.rec)
	if err != nil {
		s.forget(arn)
		return nil, err
	}
	if err := s.run(ctx, e, m.m); err != nil {
		s.forget(arn)
		_ = s.opts.Store.DeleteExecution(arn)
		return nil, engineErr(err)
	}
	// The RUNNING event goes out beside the answer (its end's waits for it).
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		s.publish(started)
		close(e.announced)
	}()
	s.awaitShortEnd(e)
	// Only the start's own frame: what other executions journaled since is not this answer's to wait for.
	if err := s.opts.Store.SyncTo(frame); err != nil {
		s.log.Error("recording an execution's start; it runs, but a crash of the machine may lose it", "execution", arn, "error", err)
		return nil, err
	}
	return map[string]any{"executionArn": arn, "startDate": epoch(started.Start)}, nil
}

// shortEnd is how long StartExecution waits for its execution to end before it makes the start
// durable alone: about one fdatasync, which the end then saves.
const shortEnd = time.Millisecond

// awaitShortEnd waits up to shortEnd for e to end, and then for its closing record to be durable:
// that commit holds the start too, so the start and its end share one fdatasync. The wait is timed
// to the end itself, not to its durable record: an end within shortEnd whose record takes an
// fdatasync more would otherwise miss it, and its start and end would cost two, one after the other.
func (s *Service) awaitShortEnd(e *execution) {
	e.mu.Lock()
	x, closed := e.x, e.closed
	e.mu.Unlock()
	if x == nil {
		return // it has already ended and its record is durable
	}
	t := time.NewTimer(shortEnd)
	defer t.Stop()
	select {
	case <-x.Done():
		<-closed
	case <-t.C:
	}
}

func orName(n string) string {
	if n == "" {
		return newName()
	}
	return n
}

func (s *Service) forget(arn string) {
	s.mu.Lock()
	delete(s.execs, arn)
	s.mu.Unlock()
}

func (s *Service) startSyncExecution(ctx context.Context, body []byte) (any, error) {
	in, m, input, err := s.decodeStart(body)
	if err != nil {
		return nil, err
	}
	if m.rec.Type != "EXPRESS" {
		return nil, apiErr("StateMachineTypeNotSupported", "This operation is not supported by this type of state machine")
	}
	x, err := s.startExpress(ctx, m, in.Name, input, "")
	if err != nil {
		return nil, err
	}
	return syncOut(s.runSync(ctx, x)), nil
}

func (s *Service) lookupExecution(arn string) (*execution, error) {
	if arn == "" {
		return nil, required("executionArn")
	}
	if _, err := s.splitArn(arn, "execution"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	e, ok := s.execs[arn]
	s.mu.Unlock()
	if !ok {
		return nil, apiErr("ExecutionDoesNotExist", "Execution Does Not Exist: '%s'", arn)
	}
	return e, nil
}

// snapshot gives the execution's description as now known: the engine's while it runs, with the
// first start's date (a resumed execution was restarted on the engine).
func (e *execution) snapshot() (durable.Execution, *asl.Execution) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rec, e.x
}

func describeOut(rec durable.Execution) map[string]any {
	out := map[string]any{
		"executionArn": rec.Arn, "stateMachineArn": rec.MachineArn, "name": rec.Name, "status": rec.Status,
		"startDate": epoch(rec.Start), "input": rec.Input, "inputDetails": map[string]any{"included": true},
		"redriveCount": 0, "redriveStatus": "NOT_REDRIVABLE",
	}
	if !rec.Stop.IsZero() {
		out["stopDate"] = epoch(rec.Stop)
	}
	if rec.Status == asl.StatusSucceeded {
		out["output"] = rec.Output
		out["outputDetails"] = map[string]any{"included": true}
	}
	if rec.Error != "" {
		out["error"] = rec.Error
	}
	if rec.Cause != "" {
		out["cause"] = rec.Cause
	}
	if rec.Status != asl.StatusRunning {
		out["redriveStatusReason"] = "Redrive is not supported by local mode"
	}
	return out
}

func (s *Service) describeExecution(ctx context.Context, body []byte) (any, error) {
	rec, err := s.namedRecord(body)
	if err != nil {
		return nil, err
	}
	return describeOut(rec), nil
}

// namedRecord is the record of the execution a request's executionArn names.
func (s *Service) namedRecord(body []byte) (durable.Execution, error) {
	var in struct {
		Arn string `json:"executionArn"`
	}
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return durable.Execution{}, err
	}
	e, err := s.lookupExecution(in.Arn)
	if err != nil {
		return durable.Execution{}, err
	}
	rec, _ := e.snapshot()
	return rec, nil
}

func (s *Service) listExecutions(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Arn          string `json:"stateMachineArn"`
		StatusFilter string `json:"statusFilter"`
		MaxResults   int    `json:"maxResults"`
		NextToken    string `json:"nextToken"`
	}
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	if _, err := s.lookupMachine(in.Arn); err != nil {
		return nil, err
	}
	switch in.StatusFilter {
	case "", asl.StatusRunning, asl.StatusSucceeded, asl.StatusFailed, asl.StatusTimedOut, asl.StatusAborted, "PENDING_REDRIVE":
	default:
		return nil, awsjson.Validation("1 validation error detected: Value '%s' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [SUCCEEDED, TIMED_OUT, PENDING_REDRIVE, ABORTED, FAILED, RUNNING]", awsjson.Clip(in.StatusFilter, 256))
	}
	s.mu.Lock()
	all := make([]*execution, 0, len(s.execs))
	for _, e := range s.execs {
		all = append(all, e)
	}
	s.mu.Unlock()
	var recs []durable.Execution
	for _, e := range all {
		rec, _ := e.snapshot()
		if rec.MachineArn == in.Arn && (in.StatusFilter == "" || rec.Status == in.StatusFilter) {
			recs = append(recs, rec)
		}
	}
	// Newest first, as AWS lists them.
	slices.SortFunc(recs, func(a, b durable.Execution) int { return int(int64(b.Seq) - int64(a.Seq)) })
	start, end, next, err := page(in.NextToken, in.MaxResults, len(recs))
	if err != nil {
		return nil, err
	}
	items := []map[string]any{}
	for _, r := range recs[start:end] {
		it := map[string]any{"executionArn": r.Arn, "stateMachineArn": r.MachineArn, "name": r.Name, "status": r.Status, "startDate": epoch(r.Start)}
		if !r.Stop.IsZero() {
			it["stopDate"] = epoch(r.Stop)
		}
		items = append(items, it)
	}
	out := map[string]any{"executions": items}
	if next != "" {
		out["nextToken"] = next
	}
	return out, nil
}

func (s *Service) getExecutionHistory(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Arn          string `json:"executionArn"`
		MaxResults   int    `json:"maxResults"`
		ReverseOrder bool   `json:"reverseOrder"`
		NextToken    string `json:"nextToken"`
		IncludeData  *bool  `json:"includeExecutionData"`
	}
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	e, err := s.lookupExecution(in.Arn)
	if err != nil {
		return nil, err
	}
	_, x := e.snapshot()
	var events []json.RawMessage
	if x != nil {
		hist := x.History()
		// The times of the events shown are journaled before they are shown, so a restart shows
		// the same ones.
		if err := s.opts.Recorder.Flush(); err != nil {
			s.log.Warn("journaling event times", "execution", in.Arn, "error", err)
		}
		data, err := json.Marshal(apiEvents(hist))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &events); err != nil {
			return nil, err
		}
	} else {
		data, err := s.opts.Store.ExecutionEvents(in.Arn)
		if err != nil {
			return nil, err
		}
		if len(data) > 0 {
			if err := json.Unmarshal(data, &events); err != nil {
				return nil, err
			}
		}
	}
	if in.ReverseOrder {
		slices.Reverse(events)
	}
	start, end, next, err := page(in.NextToken, in.MaxResults, len(events))
	if err != nil {
		return nil, err
	}
	shown := events[start:end]
	if in.IncludeData != nil && !*in.IncludeData {
		if shown, err = withoutData(shown); err != nil {
			return nil, err
		}
	}
	out := map[string]any{"events": shown}
	if next != "" {
		out["nextToken"] = next
	}
	return out, nil
}

func (s *Service) stopExecution(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Arn   string `json:"executionArn"`
		Error string `json:"error"`
		Cause string `json:"cause"`
	}
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	if len(in.Error) > 256 {
		return nil, tooLong("error", 256)
	}
	if len(in.Cause) > 32768 {
		return nil, tooLong("cause", 32768)
	}
	e, err := s.lookupExecution(in.Arn)
	if err != nil {
		return nil, err
	}
	rec, x := e.snapshot()
	if x == nil || rec.Status != asl.StatusRunning {
		// AWS answers a closed execution's stop with its stop date.
		return map[string]any{"stopDate": epoch(rec.Stop)}, nil
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if err := s.opts.Engine.Stop(in.Arn, in.Error, in.Cause); err != nil {
		return nil, engineErr(err)
	}
	// Answered once the end is durable: a stop taken is never undone by a crash (the restart would
	// run the execution on).
	select {
	case <-closed:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return map[string]any{"stopDate": epoch(x.Describe().StopDate)}, nil
}
