package sfnapi

// The task token operations: SendTaskSuccess, SendTaskFailure and SendTaskHeartbeat.

import (
	"context"
	"errors"

	"sinew/internal/asl"
	"sinew/internal/localaws/awsjson"
	"sinew/internal/localaws/durable"
)

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
