// Package bedrock is the llm.Model adapter for Amazon Bedrock's Converse API (tool use included),
// through aws-sdk-go-v2's bedrockruntime client. Tests point the client at a local server with the
// SDK's BaseEndpoint.
//
// Translation notes:
//   - system messages become Converse's top-level system blocks; tool messages become toolResult
//     blocks of a user message; consecutive messages of one role merge into one, since Converse
//     wants user and assistant to alternate;
//   - tool_choice "none" has no Converse equivalent: the tools are left out (the model cannot call
//     what it is not shown), and the history's tool calls and results go as text, since Converse
//     wants a toolConfig whenever the messages hold tool blocks (see converter);
//   - a failed call's result (llm.IsErrorResult) goes with status "error" to the models that take it;
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

	"sinew/internal/config"
	"sinew/internal/fault"
	"sinew/internal/jsonv"
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
	offered := len(req.Tools) > 0 && req.ToolChoice.Mode != llm.ChoiceNone
	conv := converter{toolsAsText: !offered, errorStatus: takesErrorStatus(id)}
	for i, msg := range req.Messages {
		if msg.Role == llm.RoleSystem {
			if msg.Content != "" {
				in.System = append(in.System, &types.SystemContentBlockMemberText{Value: msg.Content})
			}
			continue
		}
		role, blocks, err := conv.blocks(i, msg)
		if err != nil {
			return nil, err
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
	if offered {
		in.ToolConfig = toolConfig(req)
	}
	in.InferenceConfig = inferenceConfig(req.Settings)
	return in, nil
}

// converter turns messages into Converse blocks. With toolsAsText (no tool offered: tool_choice
// none, or no tools), the history's tool calls and results become text blocks: Converse requires a
// toolConfig whenever the messages hold toolUse or toolResult blocks, and declaring the tools would
// let the model call them, as its ToolChoice has no "none" (only auto, any and tool:
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolChoice.html). errorStatus
// marks a failed call's result with status "error", which only some models take.
type converter struct {
	toolsAsText bool
	errorStatus bool
}

func (c converter) blocks(i int, msg llm.Message) (types.ConversationRole, []types.ContentBlock, error) {
	var blocks []types.ContentBlock
	if msg.Content != "" && msg.Role != llm.RoleTool {
		blocks = append(blocks, &types.ContentBlockMemberText{Value: msg.Content})
	}
	switch msg.Role {
	case llm.RoleUser:
		return types.ConversationRoleUser, blocks, nil
	case llm.RoleAssistant:
		for j, tc := range msg.ToolCalls {
			args, err := llm.ParseArguments(tc.Arguments)
			if err != nil {
				f := fmt.Sprintf("messages[%d].tool_calls[%d].function.arguments", i, j)
				return "", nil, fault.Invalid(f, "%s: %v", f, err)
			}
			if c.toolsAsText {
				blocks = append(blocks, &types.ContentBlockMemberText{Value: fmt.Sprintf("[called the tool %s (call %s) with %s]", tc.Name, tc.ID, jsonv.EncodeString(args))})
				continue
			}
			blocks = append(blocks, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
				ToolUseId: aws.String(tc.ID), Name: aws.String(tc.Name), Input: document.NewLazyDocument(args),
			}})
		}
		return types.ConversationRoleAssistant, blocks, nil
	case llm.RoleTool:
		text := msg.Content
		if text == "" {
			text = "{}" // Converse refuses a blank text block
		}
		if c.toolsAsText {
			return types.ConversationRoleUser, []types.ContentBlock{&types.ContentBlockMemberText{Value: fmt.Sprintf("[the result of call %s: %s]", msg.ToolCallID, text)}}, nil
		}
		res := types.ToolResultBlock{
			ToolUseId: aws.String(msg.ToolCallID),
			Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: text}},
		}
		if c.errorStatus && llm.IsErrorResult(msg.Content) {
			res.Status = types.ToolResultStatusError
		}
		return types.ConversationRoleUser, []types.ContentBlock{&types.ContentBlockMemberToolResult{Value: res}}, nil
	}
	f := fmt.Sprintf("messages[%d].role", i)
	return "", nil, fault.Invalid(f, "%s must be system, user, assistant or tool, not %q", f, msg.Role)
}

// takesErrorStatus: a toolResult's status is supported by Anthropic Claude 3 and 4 and Amazon Nova
// models only (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolResultBlock.html);
// a model id or an inference profile names its family.
func takesErrorStatus(modelID string) bool {
	id := strings.ToLower(modelID)
	return strings.Contains(id, "anthropic.") || strings.Contains(id, "amazon.nova")
}

func toolConfig(req llm.Request) *types.ToolConfiguration {
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
	return tc
}

func inferenceConfig(s llm.Settings) *types.InferenceConfiguration {
	if s.MaxTokens == nil && s.Temperature == nil && s.TopP == nil && len(s.Stop) == 0 {
		return nil
	}
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
	return ic
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
		return fault.Wrap(fault.Provider, err, "Bedrock refused access to the model (%s): %s", apiMessage(err), firstUse)
	case errors.As(err, &validation) && strings.Contains(apiMessage(err), "inference profile"):
		return fault.Wrap(fault.InvalidInput, err, "Bedrock refused the request: %s. %s", apiMessage(err), useProfile)
	case errors.As(err, &validation):
		return fault.Wrap(fault.InvalidInput, err, "Bedrock refused the request: %s", apiMessage(err))
	case errors.As(err, &notFound) && strings.Contains(apiMessage(err), "end of its life"):
		return fault.Wrap(fault.Provider, err, "Bedrock no longer serves the model: %s. Choose a current one (%s=bedrock:<id>); %s", apiMessage(err), config.EnvModel, useProfile)
	case errors.As(err, &notFound):
		return fault.Wrap(fault.Provider, err, "Bedrock does not know the model: %s", apiMessage(err))
	case errors.As(err, &quota):
		return fault.Wrap(fault.Provider, err, "Bedrock's quota is exhausted: %s", apiMessage(err))
	case errors.As(err, &modelErr):
		return fault.Wrap(fault.Provider, err, "the model failed: %s", apiMessage(err))
	}
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		return fault.Wrap(fault.Transient, err, "Bedrock could not be reached (%v): the model (%s, by default one of Bedrock's) needs AWS. %s", llm.RootCause(err), config.EnvModel, otherModel)
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		code := re.HTTPStatusCode()
		if code == 401 || code == 403 {
			return fault.Wrap(llm.StatusKind(code), err, "Bedrock refused the AWS credentials (HTTP %d: %s): give credentials allowed bedrock:InvokeModel on the model. %s", code, apiMessage(err), otherModel)
		}
		return fault.Wrap(llm.StatusKind(code), err, "Bedrock answered HTTP %d: %s", code, apiMessage(err))
	}
	return fault.Wrap(fault.Provider, err, "Bedrock Converse failed")
}

// What the first use of a model in an account takes
// (https://docs.aws.amazon.com/bedrock/latest/userguide/model-access.html), and how a model served
// only through cross-Region inference profiles is named
// (https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html).
const (
	firstUse = "a model's first use in the account needs Anthropic's use-case form (for its models) and a first call by a principal " +
		"allowed aws-marketplace:Subscribe and ViewSubscriptions, which subscribes the account (infra/cdk/README.md, step 2); " +
		"the caller needs bedrock:InvokeModel on the model or its inference profile"
	useProfile = "Most current models are called through the inference profile of the caller's Region: the model id behind the " +
		"geography's prefix, us., eu., apac., jp., au. or global. (aws bedrock list-inference-profiles lists them)"
)

// otherModel says which settings choose a model that is not Bedrock's: Bedrock is the default,
// which local mode, without AWS, cannot reach.
var otherModel = fmt.Sprintf("Without AWS (local mode), choose another model: %s=openai:<model> with %s=<an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1 for Ollama> (and %s if it takes a key), or %s=scripted:<file>",
	config.EnvModel, config.EnvOpenAIBaseURL, config.EnvOpenAIAPIKey, config.EnvModel)

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
