package sfnapi

// The state machine operations: create, update, delete, validate, list and describe.

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"sinew/internal/asl"
	"sinew/internal/localaws/awsjson"
	"sinew/internal/localaws/durable"
)

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
