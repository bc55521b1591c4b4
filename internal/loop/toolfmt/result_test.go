package toolfmt_test

import (
	"encoding/base64"
	"testing"

	"sinew/internal/jsonv"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/tool"
)

// apiResult is an api_call executor's result as the loop receives it, with a typical server's headers.
func apiResult(body []byte, parsed any) map[string]any {
	return map[string]any{
		"status_code": float64(200),
		"headers": map[string]any{
			"content-type":              "application/json",
			"content-length":            "54",
			"date":                      "Mon, 02 Jun 2025 10:00:00 GMT",
			"server":                    "nginx/1.25.3",
			"cache-control":             "no-cache, no-store, must-revalidate",
			"x-request-id":              "6f1c2a8e-5b1d-4c8e-9a1f-2b3c4d5e6f70",
			"strict-transport-security": "max-age=31536000",
			"vary":                      "Accept-Encoding",
		},
		"json":    parsed,
		"content": base64.StdEncoding.EncodeToString(body),
	}
}

func TestModelOutput(t *testing.T) {
	body := `{"city":"Lisboa","temp_c":21,"sky":"sunny","wind":150}` // 54 bytes
	if len(body) != 54 {
		t.Fatalf("the example body is %d bytes", len(body))
	}
	parsed, _ := jsonv.DecodeString(body)
	binary := []byte{0x89, 'P', 'N', 'G', 0, 1, 2}
	cases := []struct {
		name   string
		typ    tool.Type
		output any
		want   string
	}{
		{
			name:   "JSON body once, as parsed, with only useful headers",
			typ:    tool.TypeAPICall,
			output: apiResult([]byte(body), parsed),
			want:   `{"headers":{"content-type":"application/json"},"json":{"city":"Lisboa","sky":"sunny","temp_c":21,"wind":150},"status_code":200}`,
		},
		{
			name:   "text body as text",
			typ:    tool.TypeAPICall,
			output: map[string]any{"status_code": 201, "headers": map[string]any{"Location": "/items/7", "Date": "x"}, "json": nil, "content": base64.StdEncoding.EncodeToString([]byte("created"))},
			want:   `{"headers":{"location":"/items/7"},"status_code":201,"text":"created"}`,
		},
		{
			name:   "binary body in base64",
			typ:    tool.TypeAPICall,
			output: map[string]any{"status_code": 200, "headers": map[string]any{"content-type": "image/png"}, "json": nil, "content": base64.StdEncoding.EncodeToString(binary)},
			want:   `{"content":"iVBORwABAg==","headers":{"content-type":"image/png"},"status_code":200}`,
		},
		{
			name:   "no content (include_response_content false), retry-after kept",
			typ:    tool.TypeAPICall,
			output: map[string]any{"status_code": 429, "headers": map[string]any{"retry-after": "30", "server": "x"}, "json": nil},
			want:   `{"headers":{"retry-after":"30"},"status_code":429}`,
		},
		{
			name:   "an api_call output of another shape is left as it is",
			typ:    tool.TypeAPICall,
			output: "plain",
			want:   `"plain"`,
		},
		{
			name:   "other tool types are left as they are",
			typ:    tool.TypeIntegration,
			output: apiResult([]byte(body), parsed),
			want:   jsonv.EncodeString(apiResult([]byte(body), parsed)),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := jsonv.EncodeString(toolfmt.ModelOutput(tc.typ, tc.output)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	before := len(jsonv.EncodeString(apiResult([]byte(body), parsed)))
	after := len(jsonv.EncodeString(toolfmt.ModelOutput(tool.TypeAPICall, apiResult([]byte(body), parsed))))
	if after >= before/2 {
		t.Errorf("the model's message for a 54-byte body is %d characters, from %d: want it at most half", after, before)
	}
	t.Logf("a 54-byte JSON body: the model's tool message is %d characters, was %d", after, before)
}
