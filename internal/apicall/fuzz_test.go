package apicall

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/tool"
)

// FuzzPrepare builds requests from any api_call definition and any call arguments, as Execute does
// before it sends anything. Every refusal is a typed InvalidInput; every request built goes to the
// scheme, host and port the definition fixes (no argument moves it elsewhere), and carries only
// headers net/http will send (a bad one would fail at send time as a transport error, retried).
func FuzzPrepare(f *testing.F) {
	for _, s := range [][2]string{
		{`{"method":"GET","url":"https://api.example.com/v1/{city}","headers":{"Accept":"application/json"}}`, `{"path":{"city":"Oslo"},"params":{"units":"metric","q":["a","b"]}}`},
		{`{"method":"GET","url":"https://api.example.com/v1/{city}"}`, `{"path":{"city":"../../admin"}}`},
		{`{"method":"GET","url":"https://api.example.com/v1/{city}"}`, `{"path":{"city":"@evil.test"}}`},
		{`{"method":"POST","url":"http://x.test:8080/items?fixed=1","json_":{"a":1}}`, `{"json":{"b":[1,2]},"headers":{"X-Trace":"t"},"cookies":{"sid":"abc"},"timeout":5}`},
		{`{"method":"POST","url":"http://x.test/upload"}`, `{"data":{"k":"v"},"files":{"f":{"filename":"a.txt","content":"aGk=","content_type":"text/plain"}}}`},
		{`{"method":"PUT","url":"http://x.test/raw","content":"aGk="}`, `{"headers":{"Content-Type":"application/octet-stream"},"follow_redirects":true}`},
		{`{"method":"GET","url":"http://x.test/","params":"a=1&b=2"}`, `{"params":"?c=3","include_response_content":false}`},
		{`{"method":"GET","url":"http://x.test/","params_schema":{"type":"object","properties":{"params":{"type":"object"}},"required":["params"]}}`, `{}`},
		{`{"method":"GET","url":"http://x.test/"}`, `{"headers":{"X-A":"a\u0001b"}}`},
		{`{"method":"GET","url":"http://x.test/"}`, `{"headers":{"Host":"other.test"}}`},
		{`{"method":"GET","url":"http://x.test/"}`, `{"url":"http://other.test/"}`},
		{`{"method":"get","url":"ftp://x.test/{a}?{b}"}`, `{"path":{"a":1}}`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, defJSON, callJSON string) {
		var def tool.APICallDef
		if tool.DecodeStrict([]byte(defJSON), &def, "api_call.") != nil {
			return
		}
		callV, err := jsonv.DecodeString(callJSON)
		if err != nil {
			return
		}
		call, _ := callV.(map[string]any)
		call, err = liftParameters(&def, call)
		var parts map[string]any
		if err == nil {
			parts, err = MergeParts(&def, call, nil, nil)
		}
		if err == nil {
			err = checkParamsSchema(&def, call, parts)
		}
		var p *prepared
		if err == nil {
			p, err = prepare(&def, parts)
		}
		if err == nil {
			_, err = p.newRequest(context.Background())
		}
		if err != nil {
			if k := fault.KindOf(err); k != fault.InvalidInput {
				t.Fatalf("error of kind %s: %v", k, err)
			}
			if strings.TrimSpace(fault.Message(err)) == "" {
				t.Fatalf("refusal without a message: %#v", err)
			}
			return
		}
		want, err := url.Parse(def.URL[:strings.Index(def.URL, "://")+3] + hostPart(def.URL))
		if err != nil {
			t.Fatalf("built a request from URL %q whose host does not parse: %v", def.URL, err)
		}
		if p.url.Scheme != strings.ToLower(want.Scheme) || p.url.Host != want.Host {
			t.Fatalf("definition %q, arguments %s: the request goes to %s://%s", def.URL, callJSON, p.url.Scheme, p.url.Host)
		}
		for name, vals := range p.header {
			if !validHeaderName(name) {
				t.Fatalf("header name %q would not be sent", name)
			}
			for _, v := range vals {
				if !validHeaderValue(v) {
					t.Fatalf("header %s value %q would not be sent", name, v)
				}
			}
		}
	})
}

// hostPart is the authority of a URL as written, up to its path, query or fragment.
func hostPart(raw string) string {
	rest := raw[strings.Index(raw, "://")+3:]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		return rest[:i]
	}
	return rest
}

// validHeaderValue is net/http's rule (httpguts.ValidHeaderFieldValue): no control byte but tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
