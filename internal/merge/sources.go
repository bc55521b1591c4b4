// Package merge computes what an integration or system call finally runs with, from the call, the
// tool's definition and the metadata of the agent and of the task or session. The functions here
// are pure; store.MergeSources reads their inputs in one BatchGetItem. api_call's request parts
// merge in apicall.MergeParts, next to the request they build.
//
// Metadata lives on the agent, and on the task (workflow path) or the session (chat path), under
// the keys below, each a map from tool name to an object. The task's or session's entry for a
// tool replaces the agent's entry for that tool (shallow, at tool-name level); a call names the
// agent and at most one of task and session. Then, right winning key by key:
//
//	integration  arguments = call ∪ definition.arguments ∪ metadata args
//	             setup     = definition.setup ∪ metadata setup (a stored tool's setup is sealed apart)
//	system       the definition's arguments are defaults the call's arguments override
//
// Arguments are validated after the merge, against the method's schema, so values that come from
// the definition or the metadata count. Julep reads these keys in get_tool_args_from_metadata:
// https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/agents-api/agents_api/queries/tools/get_tool_args_from_metadata.py
//
// The binding rule (CheckBinding): a secret in an integration's setup is sent only to the endpoint
// the setup named where the secret was attached. Setup merges key by key, so a higher layer that
// changes an endpoint key (as declared by the provider's setup type) without giving the secret
// again is refused rather than merged.
package merge

// The metadata keys (Julep's intended, singular names). Each maps a tool name to an
// object.
const (
	KeyIntegrationArgs  = "x-integration-args"
	KeyIntegrationSetup = "x-integration-setup"
	KeyAPICallArgs      = "x-api_call-args"
	KeyAPICallSetup     = "x-api_call-setup"
)

// SetupKeys are the metadata keys whose values are secrets.
var SetupKeys = []string{KeyIntegrationSetup, KeyAPICallSetup}

// ArgsKeys are the metadata keys whose values are plain arguments.
var ArgsKeys = []string{KeyIntegrationArgs, KeyAPICallArgs}

// Entries are one level's metadata entries for one tool, by key (KeyIntegrationArgs ...); a key is
// absent when the level has no entry for the tool under it. An empty object is an entry.
type Entries map[string]map[string]any

// Sources is everything the merge needs from storage for one call.
type Sources struct {
	Agent Entries // the agent's entries for the tool
	Scope Entries // the task's or the session's (nil when the call names neither)
	// ToolSetup is the stored tool's own integration.setup, opened; nil for an inline tool or one
	// without setup.
	ToolSetup map[string]any
}

// Metadata gives the entry under key for the tool: the scope's entry replaces the agent's whole
// (shallow, at tool-name level); nil when neither has one.
func (s Sources) Metadata(key string) map[string]any {
	if e, ok := s.Scope[key]; ok {
		return e
	}
	if e, ok := s.Agent[key]; ok {
		return e
	}
	return nil
}
