package tool

import "slices"

// APICallParts are the request parts an api_call's arguments may hold.
var APICallParts = []string{"params", "json", "json_", "data", "content", "files", "cookies", "headers",
	"path", "timeout", "follow_redirects", "include_response_content"}

// DescribesParameters reports how params_schema reads. In Julep's documentation it describes the
// request's parameters (https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/documentation/concepts/tools.mdx,
// the weather_api tool: properties q, units, appid, called with {"params": {...}}); so does sinew,
// the query parameters and the URL's {placeholders} by name. A schema whose every property names a
// request part (params, json, path, ...) instead describes the call's arguments themselves, a form
// sinew also accepts; an empty schema describes nothing either way.
func (ps *ParameterSchema) DescribesParameters() bool {
	if ps == nil || len(ps.Properties) == 0 {
		return false
	}
	for k := range ps.Properties {
		if !slices.Contains(APICallParts, k) {
			return true
		}
	}
	return false
}
