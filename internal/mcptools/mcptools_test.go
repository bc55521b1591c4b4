package mcptools

import (
	"testing"

	"sinew/internal/tool"
)

func TestToolName(t *testing.T) {
	tests := []struct{ prefix, remote, want string }{
		{"m_", "add", "m_add"},
		{"m_", "get-issue.v2", "m_get_issue_v2"},
		{"m_", "a_name_that_is_far_too_long_for_a_tool_name", ""},
		{"m_", "", ""},
	}
	for _, tc := range tests {
		got, err := toolName(tc.prefix, tc.remote)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("toolName(%q, %q) = %q, %v; want %q", tc.prefix, tc.remote, got, err, tc.want)
		}
	}
}

func TestDiff(t *testing.T) {
	mk := func(name, desc, server string) tool.Tool {
		return tool.Tool{ID: name, Name: name, Type: tool.TypeIntegration, Description: desc, Integration: &tool.IntegrationDef{
			Provider: "mcp", Method: "call_tool", ParamsSchema: schemaOf(nil),
			Origin: &tool.Origin{Kind: OriginKind, Server: server, Prefix: "m_", Remote: name[2:]}}}
	}
	want := []tool.Tool{mk("m_a", "same", "s"), mk("m_b", "new text", "s"), mk("m_c", "", "s"), mk("m_d", "", "s")}
	have := []tool.Tool{mk("m_a", "same", "s"), mk("m_b", "old text", "s"), mk("m_d", "", "other server"), mk("m_gone", "", "s"),
		{ID: "f", Name: "m_x", Type: tool.TypeFunction}}
	p := diff(want, have, "s", "m_")
	if len(p.add) != 1 || p.add[0].Name != "m_c" || len(p.change) != 1 || p.change[0].id != "m_b" || p.same != 1 ||
		len(p.remove) != 1 || p.remove[0].Name != "m_gone" || len(p.clashes) != 1 || p.clashes[0] != "m_d" {
		t.Fatalf("diff: %+v", p)
	}
}
