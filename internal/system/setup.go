package system

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/secrets"
)

// refuseSetup refuses a body a system tool would write that touches setup: a metadata key
// x-<type>-setup (x-integration-setup, x-api_call-setup, any other), a tool definition carrying
// integration setup, or one naming a developer secret (in api_call headers, its secrets field, or
// anywhere else). A system tool is run for a model, and setup says where a developer's secrets are
// sent: a model that could write it could send them to a host of its choosing. Setup is written by
// the developer through the HTTP API only.
func refuseSetup(body map[string]any) error {
	if meta, ok := body["metadata"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(meta)) {
			if IsSetupKey(k) {
				return fault.Invalid("arguments.metadata."+k, "a system tool cannot write metadata.%s: setup names the developer's secrets and where they are sent, so only the developer sets it, through the HTTP API", k)
			}
		}
	}
	tools, _ := body["tools"].([]any)
	for i, tl := range tools {
		m, _ := tl.(map[string]any)
		field := fmt.Sprintf("arguments.tools[%d]", i)
		if in, ok := m["integration"].(map[string]any); ok && in["setup"] != nil {
			return fault.Invalid(field+".integration.setup", "a system tool cannot write a tool's integration.setup: setup names the developer's secrets and where they are sent, so only the developer sets it, through the HTTP API")
		}
		if ac, ok := m["api_call"].(map[string]any); ok && ac["secrets"] != nil {
			return fault.Invalid(field+".api_call.secrets", "a tool written by a system tool cannot name developer secrets")
		}
		if secrets.HasRefs(m) {
			return fault.Invalid(field, "a tool written by a system tool cannot name developer secrets ({\"secret\": ...} or \"$ secrets...\")")
		}
	}
	return nil
}

// IsSetupKey reports whether a metadata key holds setup: x-<anything>-setup, in any case.
func IsSetupKey(k string) bool {
	l := strings.ToLower(k)
	return strings.HasPrefix(l, "x-") && strings.HasSuffix(l, "-setup")
}
