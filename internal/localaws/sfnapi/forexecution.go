package sfnapi

// DescribeStateMachineForExecution: the state machine as the execution started on it, which an
// update of the machine afterwards does not change.

import (
	"context"
	"strconv"
	"strings"
	"time"

	"sinew/internal/asl"
	"sinew/internal/localaws/durable"
)

// startRecord is the record of a Standard execution of m about to start (s.mu held): it keeps
// the machine's definition, role, revision and update date of this start.
func (s *Service) startRecord(m *machine, arn, name, input string) durable.Execution {
	s.seq++
	updated := m.rec.Updated
	if updated.IsZero() {
		updated = m.rec.Created
	}
	return durable.Execution{Arn: arn, MachineArn: m.rec.Arn, Name: name, Input: input, Start: time.Now().UTC(),
		Status: asl.StatusRunning, Seq: s.seq, Definition: m.rec.Definition, RoleArn: m.rec.RoleArn,
		Revision: m.rec.Revision, Updated: updated}
}

// https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeStateMachineForExecution.html
func (s *Service) describeStateMachineForExecution(ctx context.Context, body []byte) (any, error) {
	rec, err := s.namedRecord(body)
	if err != nil {
		return nil, err
	}
	def, rev, updated := rec.Definition, rec.Revision, rec.Updated
	if def == "" && rec.DefinitionRef != "" {
		if def, err = s.opts.Store.Definition(rec.DefinitionRef); err != nil {
			return nil, err
		}
	}
	if def == "" {
		// A record that ended before executions kept their definitions: the machine's own is the
		// best there is.
		m, err := s.lookupMachine(rec.MachineArn)
		if err != nil {
			return nil, err
		}
		def, rev, updated = m.rec.Definition, m.rec.Revision, m.rec.Updated
		if updated.IsZero() {
			updated = m.rec.Created
		}
	}
	name := rec.MachineArn[strings.LastIndex(rec.MachineArn, ":")+1:]
	return map[string]any{
		"stateMachineArn": rec.MachineArn, "name": name, "definition": def, "roleArn": rec.RoleArn,
		"updateDate":           epoch(updated),
		"loggingConfiguration": map[string]any{"level": "OFF", "includeExecutionData": false},
		"tracingConfiguration": map[string]any{"enabled": false},
		"revisionId":           strconv.Itoa(max(rev, 1)),
	}, nil
}
