// Package bedrock is the llm.Model adapter for Amazon Bedrock's Converse API (tool use included),
// through aws-sdk-go-v2's bedrockruntime client. Tests point the client at a local server with the
// SDK's BaseEndpoint.
//
// Translation notes:
//   - system messages become Converse's top-level system blocks; tool messages become toolResult
//     blocks of a user message; consecutive messages of one role merge into one, since Converse
//     wants user and assistant to alternate;
//   - tool_choice "none" has no Converse equivalent: without tool blocks in the history the tools
//     are left out (the model cannot call what it is not shown); with them Converse requires the
//     tools to be declared, so they are, with auto;
//   - settings other than max_tokens, temperature, top_p and stop have no Converse field and are
//     not sent;
//   - stopReason: end_turn and stop_sequence → stop, tool_use → tool_calls, max_tokens and
//     model_context_window_exceeded → length, guardrail_intervened and content_filtered →
//     content_filter; malformed_model_output and malformed_tool_use are a fault.Provider error.
package bedrock

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"sinew/internal/fault"
	"sinew/internal/llm"
)

// API is the part of the bedrockruntime client the adapter uses.
type API interface {
	Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
}

// Model talks to one Bedrock model (a model id or an inference profile).
type Model struct {
	API     API
	ModelID string
}

// New makes a Model from an AWS config. The SDK's own retries are off: a Transient error goes back
// to the caller, whose retry policy (the state machine's Retry, the chat route) is the one place
// that decides.
func New(cfg aws.Config, modelID string, optFns ...func(*bedrockruntime.Options)) *Model {
	opts := append([]func(*bedrockruntime.Options){func(o *bedrockruntime.Options) { o.RetryMaxAttempts = 1 }}, optFns...)
	return &Model{API: bedrockruntime.NewFromConfig(cfg, opts...), ModelID: modelID}
}

// Converse implements llm.Model.
func (m *Model) Converse(ctx context.Context, req llm.Request) (llm.Response, error) {
	in, err := m.input(req)
	if err != nil {
		return llm.Response{}, err
	}
	out, err := m.API.Converse(ctx, in)
	if err != nil {
		return llm.Response{}, classify(ctx, err)
	}
	return response(out, aws.ToString(in.ModelId))
}

func (m *Model) input(req llm.Request) (*bedrockruntime.ConverseInput, error) {
	id := m.ModelID
	if req.Model != "" {
		id = req.Model
	}
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(id)}
	hasToolBlocks := false
	for i, msg := range req.Messages {
		var role types.ConversationRole
		var blocks []types.ContentBlock
		switch msg.Role {
		case llm.RoleSystem:
			if msg.Content != "" {
				in.System = append(in.System, &types.SystemContentBlockMemberText{Value: msg.Content})
			}
			continue
		case llm.RoleUser:
			role = types.ConversationRoleUser
			if msg.Content != "" {
				blocks = append(blocks, &types.ContentBlockMemberText{Value: msg.Content})
			}
		case llm.RoleAssistant:
			role = types.ConversationRoleAssistant
			if msg.Content != "" {
				blocks = append(blocks, &types.ContentBlockMemberText{Value: msg.Content})
			}
			for j, c := range msg.ToolCalls {
				args, err := llm.ParseArguments(c.Arguments)
				if err != nil {
					f := fmt.Sprintf("messages[%d].tool_calls[%d].function.arguments", i, j)
					return nil, fault.Invalid(f, "%s: %v", f, err)
				}
				blocks = append(blocks, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String(c.ID), Name: aws.String(c.Name), Input: document.NewLazyDocument(args),
				}})
				hasToolBlocks = true
			}
		case llm.RoleTool:
			role = types.ConversationRoleUser
			text := msg.Content
			if text == "" {
				text = "{}" // Converse refuses a blank text block
			}
			blocks = append(blocks, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
				ToolUseId: aws.String(msg.ToolCallID),
				Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: text}},
			}})
			hasToolBlocks = true
		default:
			f := fmt.Sprintf("messages[%d].role", i)
			return nil, fault.Invalid(f, "%s must be system, user, assistant or tool, not %q", f, msg.Role)
		}
		if len(blocks) == 0 {
			f := fmt.Sprintf("messages[%d].content", i)
			return nil, fault.Invalid(f, "%s is empty: Bedrock needs some content in every message", f)
		}
		if n := len(in.Messages); n > 0 && in.Messages[n-1].Role == role {
			in.Messages[n-1].Content = append(in.Messages[n-1].Content, blocks...)
			continue
		}
		in.Messages = append(in.Messages, types.Message{Role: role, Content: blocks})
	}
	if len(in.Messages) == 0 || in.Messages[0].Role != types.ConversationRoleUser {
		return nil, fault.Invalid("messages", "messages must hold a user message before any assistant message: Bedrock starts a conversation with the user")
	}
	if len(req.Tools) > 0 && (req.ToolChoice.Mode != llm.ChoiceNone || hasToolBlocks) {
		tc := &types.ToolConfiguration{}
		for _, f := range req.Tools {
			spec := types.ToolSpecification{Name: aws.String(f.Name), InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(objectSchema(f.Parameters))}}
			if f.Description != "" {
				spec.Description = aws.String(f.Description)
			}
			tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: spec})
		}
		switch req.ToolChoice.Mode {
		case llm.ChoiceRequired:
			tc.ToolChoice = &types.ToolChoiceMemberAny{}
		case llm.ChoiceNamed:
			tc.ToolChoice = &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(req.ToolChoice.Name)}}
		}
		in.ToolConfig = tc
	}
	s := req.Settings
	if s.MaxTokens != nil || s.Temperature != nil || s.TopP != nil || len(s.Stop) > 0 {
		ic := &types.InferenceConfiguration{StopSequences: s.Stop}
		if s.MaxTokens != nil {
			ic.MaxTokens = aws.Int32(int32(*s.MaxTokens))
		}
		if s.Temperature != nil {
			ic.Temperature = aws.Float32(float32(*s.Temperature))
		}
		if s.TopP != nil {
			ic.TopP = aws.Float32(float32(*s.TopP))
		}
		in.InferenceConfig = ic
	}
	return in, nil
}

// objectSchema makes sure Converse gets an object schema (it refuses anything else).
func objectSchema(p map[string]any) map[string]any {
	if p == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return p
}

func response(out *bedrockruntime.ConverseOutput, modelID string) (llm.Response, error) {
	res := llm.Response{Message: llm.Message{Role: llm.RoleAssistant}, Model: modelID}
	if out.Usage != nil {
		res.Usage = llm.Usage{
			PromptTokens:     int64(aws.ToInt32(out.Usage.InputTokens)),
			CompletionTokens: int64(aws.ToInt32(out.Usage.OutputTokens)),
			TotalTokens:      int64(aws.ToInt32(out.Usage.TotalTokens)),
		}
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return llm.Response{}, fault.New(fault.Provider, "Bedrock answered without a message")
	}
	var text strings.Builder
	for _, b := range msg.Value.Content {
		switch b := b.(type) {
		case *types.ContentBlockMemberText:
			text.WriteString(b.Value)
		case *types.ContentBlockMemberToolUse:
			args := "{}"
			if b.Value.Input != nil {
				raw, err := b.Value.Input.MarshalSmithyDocument()
				if err != nil {
					return llm.Response{}, fault.Wrap(fault.Provider, err, "Bedrock's tool call %s has input that is not JSON", aws.ToString(b.Value.Name))
				}
				args = string(raw)
			}
			res.Message.ToolCalls = append(res.Message.ToolCalls, llm.ToolCall{ID: aws.ToString(b.Value.ToolUseId), Name: aws.ToString(b.Value.Name), Arguments: args})
		}
	}
	res.Message.Content = text.String()
	var reason llm.FinishReason
	switch out.StopReason {
	case types.StopReasonEndTurn, types.StopReasonStopSequence:
		reason = llm.FinishStop
	case types.StopReasonToolUse:
		reason = llm.FinishToolCalls
	case types.StopReasonMaxTokens, types.StopReasonModelContextWindowExceeded:
		reason = llm.FinishLength
	case types.StopReasonGuardrailIntervened, types.StopReasonContentFiltered:
		reason = llm.FinishContentFilter
	case types.StopReasonMalformedModelOutput, types.StopReasonMalformedToolUse:
		return llm.Response{}, fault.New(fault.Provider, "the model produced malformed output (%s); try again or choose another model", out.StopReason)
	default:
		reason = llm.FinishStop
	}
	res.FinishReason = llm.Finish(res.Message, reason)
	return res, nil
}

// classify types a Converse error. The messages are Bedrock's own (they name the
// model and the broken rule, never a credential).
func classify(ctx context.Context, err error) error {
	if e := llm.ContextError(ctx, err, "Bedrock Converse"); e != nil {
		return e
	}
	var (
		throttling  *types.ThrottlingException
		unavailable *types.ServiceUnavailableException
		internal    *types.InternalServerException
		notReady    *types.ModelNotReadyException
		timeout     *types.ModelTimeoutException
		denied      *types.AccessDeniedException
		validation  *types.ValidationException
		notFound    *types.ResourceNotFoundException
		quota       *types.ServiceQuotaExceededException
		modelErr    *types.ModelErrorException
	)
	switch {
	case errors.As(err, &throttling), errors.As(err, &unavailable), errors.As(err, &internal),
		errors.As(err, &notReady), errors.As(err, &timeout):
		return fault.Wrap(fault.Transient, err, "Bedrock is busy or unavailable (%s); try again", apiMessage(err))
	case errors.As(err, &denied):
		return fault.Wrap(fault.Provider, err, "Bedrock refused access to the model (%s): check the model access and the role's bedrock:InvokeModel permission", apiMessage(err))
	case errors.As(err, &validation):
		return fault.Wrap(fault.InvalidInput, err, "Bedrock refused the request: %s", apiMessage(err))
	case errors.As(err, &notFound):
		return fault.Wrap(fault.Provider, err, "Bedrock does not know the model: %s", apiMessage(err))
	case errors.As(err, &quota):
		return fault.Wrap(fault.Provider, err, "Bedrock's quota is exhausted: %s", apiMessage(err))
	case errors.As(err, &modelErr):
		return fault.Wrap(fault.Provider, err, "the model failed: %s", apiMessage(err))
	}
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		return fault.Wrap(fault.Transient, err, "Bedrock could not be reached; try again")
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return fault.Wrap(llm.StatusKind(re.HTTPStatusCode()), err, "Bedrock answered HTTP %d: %s", re.HTTPStatusCode(), apiMessage(err))
	}
	return fault.Wrap(fault.Provider, err, "Bedrock Converse failed")
}

func apiMessage(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		if m := ae.ErrorMessage(); m != "" {
			return m
		}
		return ae.ErrorCode()
	}
	return "unknown error"
}
