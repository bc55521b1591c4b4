package sfnapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
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

type createReq struct {
	Name       string `json:"name"`
	Definition string `json:"definition"`
	RoleArn    string `json:"roleArn"`
	Type       string `json:"type"`
}

func (s *Service) parseDefinition(def string) (*asl.Machine, error) {
	if len(def) > maxDefinition {
		return nil, tooLong("definition", maxDefinition)
	}
	m, err := asl.Parse([]byte(def), asl.Options{JSONata: s.opts.JSONata})
	if err != nil {
		var de *asl.DefinitionError
		if errors.As(err, &de) {
			return nil, apiErr("InvalidDefinition", "%s", de.Error())
		}
		return nil, apiErr("InvalidDefinition", "Invalid State Machine Definition: '%s'", err.Error())
	}
	return m, nil
}

func (s *Service) createStateMachine(ctx context.Context, body []byte) (any, error) {
	var in createReq
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	switch {
	case in.Name == "":
		return nil, required("name")
	case in.Definition == "":
		return nil, required("definition")
	case in.RoleArn == "":
		return nil, required("roleArn")
	}
	if err := checkName(in.Name); err != nil {
		return nil, err
	}
	if in.Type == "" {
		in.Type = "STANDARD"
	}
	if in.Type != "STANDARD" && in.Type != "EXPRESS" {
		return nil, awsjson.Validation("1 validation error detected: Value '%s' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]", awsjson.Clip(in.Type, 256))
	}
	m, err := s.parseDefinition(in.Definition)
	if err != nil {
		return nil, err
	}
	if in.Type == "EXPRESS" {
		if err := checkExpress(in.Definition); err != nil {
			return nil, err
		}
	}
	arn := s.MachineArn(in.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.machines[arn]; ok {
		// AWS: the same request again is idempotent; anything else is a clash.
		if old.rec.Definition == in.Definition && old.rec.RoleArn == in.RoleArn && old.rec.Type == in.Type {
			return map[string]any{"stateMachineArn": arn, "creationDate": epoch(old.rec.Created)}, nil
		}
		return nil, apiErr("StateMachineAlreadyExists", "State Machine Already Exists: '%s'", arn)
	}
	rec := durable.Machine{Arn: arn, Name: in.Name, Definition: in.Definition, RoleArn: in.RoleArn, Type: in.Type, Created: time.Now().UTC(), Revision: 1}
	if err := s.opts.Store.PutMachine(rec); err != nil {
		return nil, err
	}
	s.machines[arn] = &machine{rec: rec, m: m}
	return map[string]any{"stateMachineArn": arn, "creationDate": epoch(rec.Created)}, nil
}

func (s *Service) lookupMachine(arn string) (*machine, error) {
	if arn == "" {
		return nil, required("stateMachineArn")
	}
	if _, err := s.splitArn(arn, "stateMachine"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	m, ok := s.machines[arn]
	s.mu.Unlock()
	if !ok {
		return nil, apiErr("StateMachineDoesNotExist", "State Machine Does Not Exist: '%s'", arn)
	}
	return m, nil
}

func (s *Service) updateStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Arn        string `json:"stateMachineArn"`
		Definition string `json:"definition"`
		RoleArn    string `json:"roleArn"`
	}
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	old, err := s.lookupMachine(in.Arn)
	if err != nil {
		return nil, err
	}
	if in.Definition == "" && in.RoleArn == "" {
		return nil, awsjson.Validation("Either the definition or the roleArn must be specified")
	}
	rec := old.rec
	pm := old.m
	if in.Definition != "" {
		if pm, err = s.parseDefinition(in.Definition); err != nil {
			return nil, err
		}
		if rec.Type == "EXPRESS" {
			if err := checkExpress(in.Definition); err != nil {
				return nil, err
			}
		}
		rec.Definition = in.Definition
	}
	if in.RoleArn != "" {
		rec.RoleArn = in.RoleArn
	}
	rec.Revision++
	rec.Updated = time.Now().UTC()
	// Running executions keep the definition they started with (the engine holds it).
	if err := s.opts.Store.PutMachine(rec); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.machines[in.Arn] = &machine{rec: rec, m: pm}
	s.mu.Unlock()
	return map[string]any{"updateDate": epoch(rec.Updated), "revisionId": strconv.Itoa(rec.Revision)}, nil
}

func (s *Service) deleteStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Arn string `json:"stateMachineArn"`
	}
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	if in.Arn == "" {
		return nil, required("stateMachineArn")
	}
	if _, err := s.splitArn(in.Arn, "stateMachine"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	_, ok := s.machines[in.Arn]
	delete(s.machines, in.Arn)
	s.mu.Unlock()
	if ok {
		if err := s.opts.Store.DeleteMachine(in.Arn); err != nil {
			return nil, err
		}
	}
	// AWS answers success for a machine that does not exist.
	return struct{}{}, nil
}

func (s *Service) validateDefinition(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Definition string `json:"definition"`
		Type       string `json:"type"`
	}
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	if in.Definition == "" {
		return nil, required("definition")
	}
	if len(in.Definition) > maxDefinition {
		return nil, tooLong("definition", maxDefinition)
	}
	_, err := asl.Parse([]byte(in.Definition), asl.Options{JSONata: s.opts.JSONata})
	if err == nil {
		return map[string]any{"result": "OK", "diagnostics": []any{}, "truncated": false}, nil
	}
	var de *asl.DefinitionError
	if !errors.As(err, &de) {
		return nil, err
	}
	return map[string]any{"result": "FAIL", "diagnostics": de.Diagnostics, "truncated": false}, nil
}

func (s *Service) listStateMachines(ctx context.Context, body []byte) (any, error) {
	var in struct {
		MaxResults int    `json:"maxResults"`
		NextToken  string `json:"nextToken"`
	}
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	s.mu.Lock()
	ms := make([]durable.Machine, 0, len(s.machines))
	for _, m := range s.machines {
		ms = append(ms, m.rec)
	}
	s.mu.Unlock()
	slices.SortFunc(ms, func(a, b durable.Machine) int { return strings.Compare(a.Name, b.Name) })
	start, end, next, err := page(in.NextToken, in.MaxResults, len(ms))
	if err != nil {
		return nil, err
	}
	items := []map[string]any{}
	for _, m := range ms[start:end] {
		items = append(items, map[string]any{"stateMachineArn": m.Arn, "name": m.Name, "type": m.Type, "creationDate": epoch(m.Created)})
	}
	out := map[string]any{"stateMachines": items}
	if next != "" {
		out["nextToken"] = next
	}
	return out, nil
}

func (s *Service) describeStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Arn string `json:"stateMachineArn"`
	}
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	m, err := s.lookupMachine(in.Arn)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"stateMachineArn": m.rec.Arn, "name": m.rec.Name, "status": "ACTIVE", "definition": m.rec.Definition,
		"roleArn": m.rec.RoleArn, "type": m.rec.Type, "creationDate": epoch(m.rec.Created),
		"loggingConfiguration": map[string]any{"level": "OFF", "includeExecutionData": false},
		"revisionId":           strconv.Itoa(m.rec.Revision),
	}, nil
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
	s.seq++
	e := &execution{rec: durable.Execution{Arn: arn, MachineArn: m.rec.Arn, Name: name, Input: input,
		Start: time.Now().UTC(), Status: asl.StatusRunning, Seq: s.seq, Definition: m.rec.Definition, RoleArn: m.rec.RoleArn},
		resumed: true, announced: make(chan struct{})}
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
	var in struct {
		Arn string `json:"executionArn"`
	}
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	e, err := s.lookupExecution(in.Arn)
	if err != nil {
		return nil, err
	}
	rec, _ := e.snapshot()
	return describeOut(rec), nil
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

func checkToken(tok string) error {
	if tok == "" {
		return required("taskToken")
	}
	if len(tok) > 2048 {
		return tooLong("taskToken", 2048)
	}
	return nil
}

// answer sends a token's answer through the journal, or straight to the engine for a token that
// is none of a journaled execution's.
func (s *Service) answer(tok string, o durable.Outcome) error {
	handled, err := s.opts.Recorder.Answer(tok, o, func(cur string) error { return s.opts.Engine.SendTaskHeartbeat(cur) })
	if errors.Is(err, durable.ErrAnswered) {
		// AWS answers a token already answered with TaskTimedOut, not TaskDoesNotExist.
		return apiErr("TaskTimedOut", "Task Timed Out: 'Provided task does not exist anymore'")
	}
	if err != nil {
		return engineErr(err)
	}
	if !handled {
		if err := s.deliver(tok, o); err != nil {
			return engineErr(err)
		}
	}
	return nil
}

func (s *Service) sendTaskSuccess(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Token  string  `json:"taskToken"`
		Output *string `json:"output"`
	}
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	if err := checkToken(in.Token); err != nil {
		return nil, err
	}
	if in.Output == nil {
		return nil, required("output")
	}
	if len(*in.Output) > asl.MaxPayloadBytes {
		return nil, tooLong("output", asl.MaxPayloadBytes)
	}
	if err := checkJSON(*in.Output); err != nil {
		return nil, apiErr("InvalidOutput", "Invalid Output: '%s'", err.Error())
	}
	if err := s.answer(in.Token, durable.Outcome{Success: true, Output: *in.Output}); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

func (s *Service) sendTaskFailure(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Token string `json:"taskToken"`
		Error string `json:"error"`
		Cause string `json:"cause"`
	}
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	if err := checkToken(in.Token); err != nil {
		return nil, err
	}
	if len(in.Error) > 256 {
		return nil, tooLong("error", 256)
	}
	if len(in.Cause) > 32768 {
		return nil, tooLong("cause", 32768)
	}
	if err := s.answer(in.Token, durable.Outcome{Error: in.Error, Cause: in.Cause}); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

func (s *Service) sendTaskHeartbeat(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Token string `json:"taskToken"`
	}
	if err := awsjson.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	if err := checkToken(in.Token); err != nil {
		return nil, err
	}
	tok, waiting := s.opts.Recorder.Current(in.Token)
	if waiting {
		return struct{}{}, nil
	}
	if err := s.opts.Engine.SendTaskHeartbeat(tok); err != nil {
		return nil, engineErr(err)
	}
	// The renewed deadline is journaled in the background: made durable before the answer, a
	// heartbeat taken is never lost to a crash (the restart would time the task out at the
	// deadline before it).
	if err := s.opts.Recorder.Flush(); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}
