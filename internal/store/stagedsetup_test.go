package store_test

import (
	"bytes"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/store"
)

// TestStagedSetup: a staged setup reads back through MergeSources for its owner alone (an agent,
// or a task with its agent), sealed in the table, and is gone once dropped.
func TestStagedSetup(t *testing.T) {
	e := newEnv(t)
	agent, other := e.agent(t, "d"), e.agent(t, "d")
	// e.agent gives owners; the merge names agents by id.
	task := must[*store.Task](t)(func() (*store.Task, error) {
		tk, _, err := e.s.CreateTask(ctx(), "d", agent.ID, store.Task{Name: "t"}, nil)
		return tk, err
	}())
	setup := map[string]any{"transport": "http", "http_headers": map[string]any{"Authorization": "Bearer s3cr3t-staged"}}
	tests := []struct {
		name  string
		owner store.Owner
		ref   func(id string) store.MergeRef
		deny  func(id string) store.MergeRef
	}{
		{"agent", agent,
			func(id string) store.MergeRef {
				return store.MergeRef{AgentID: agent.ID, Tool: "mcp_list_tools", ToolID: id}
			},
			func(id string) store.MergeRef {
				return store.MergeRef{AgentID: other.ID, Tool: "mcp_list_tools", ToolID: id}
			}},
		{"task", store.Owner{Kind: store.OwnerTask, ID: task.ID},
			func(id string) store.MergeRef {
				return store.MergeRef{AgentID: agent.ID, TaskID: task.ID, Tool: "mcp_list_tools", ToolID: id}
			},
			func(id string) store.MergeRef {
				return store.MergeRef{AgentID: agent.ID, Tool: "mcp_list_tools", ToolID: id}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := must[string](t)(e.s.StageSetup(ctx(), "d", tt.owner, setup))
			src := must[*mergeSources](t)(mergeSrc(e, "d", tt.ref(id)))
			if h, _ := src.ToolSetup["http_headers"].(map[string]any); h["Authorization"] != "Bearer s3cr3t-staged" {
				t.Fatalf("staged setup read back as %v", src.ToolSetup)
			}
			if _, err := mergeSrc(e, "d", tt.deny(id)); !fault.Is(err, fault.NotFound) {
				t.Errorf("another owner reads the staged setup: %v", err)
			}
			for _, it := range e.scan(t) {
				if holds(&types.AttributeValueMemberM{Value: it}, []byte("s3cr3t-staged")) {
					t.Fatalf("the table holds the header in the clear: %v", it)
				}
			}
			must[struct{}](t)(struct{}{}, e.s.DropStagedSetup(ctx(), "d", id))
			if src := must[*mergeSources](t)(mergeSrc(e, "d", tt.ref(id))); src.ToolSetup != nil {
				t.Errorf("a dropped setup still reads %v", src.ToolSetup)
			}
		})
	}
}

// holds reports whether an attribute value holds b, in a string or binary anywhere inside it.
func holds(v types.AttributeValue, b []byte) bool {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return bytes.Contains([]byte(x.Value), b)
	case *types.AttributeValueMemberB:
		return bytes.Contains(x.Value, b)
	case *types.AttributeValueMemberM:
		for _, e := range x.Value {
			if holds(e, b) {
				return true
			}
		}
	case *types.AttributeValueMemberL:
		for _, e := range x.Value {
			if holds(e, b) {
				return true
			}
		}
	}
	return false
}
