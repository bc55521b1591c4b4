package openapitools

import (
	"fmt"
	"hash/fnv"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"sinew/internal/fault"
	"sinew/internal/netguard"
	"sinew/internal/tool"
)

// Options configure an import.
type Options struct {
	// Guard decides which servers a tool may have: the api_call executor's policy, so a tool is
	// never made for a server every call to would be refused. nil is netguard.New().
	Guard *netguard.Policy
}

// methods are the operations of a path item, in the order the OpenAPI specification lists them.
var methods = []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}

type opRef struct {
	path, method string
	item         *openapi3.PathItem
	op           *openapi3.Operation
}

func (o opRef) label() string { return label(o.method, o.path, o.op.OperationID) }

type builder struct {
	doc     *openapi3.T
	req     *Request
	guard   *netguard.Policy
	base    string            // base_url, checked
	servers map[string]string // server URL -> why it cannot be used ("" when it can)
	used    map[string]bool   // tool names made
	res     *Result
}

// Build makes the tools of req's document. It reads nothing but the request: no server is
// contacted and no $ref outside the document is followed.
func Build(req *Request, opts Options) (*Result, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	doc, err := load(req.Document)
	if err != nil {
		return nil, err
	}
	b := &builder{doc: doc, req: req, guard: opts.Guard, servers: map[string]string{}, used: map[string]bool{},
		res: &Result{Tools: []tool.Tool{}, Setup: map[string]map[string]any{}, Skipped: []Skipped{}}}
	if b.guard == nil {
		b.guard = netguard.New()
	}
	if err := b.checkSchemes(); err != nil {
		return nil, err
	}
	if req.BaseURL != "" {
		base, why := b.server(req.BaseURL)
		if why != "" {
			return nil, fault.New(fault.Forbidden, "base_url cannot be used: %s", why)
		}
		b.base = base
	}
	ops := operations(doc)
	if err := b.filter(&ops); err != nil {
		return nil, err
	}
	for _, o := range ops {
		t, setup, why := b.make(o)
		if why != "" {
			b.res.Skipped = append(b.res.Skipped, Skipped{Operation: o.label(), Reason: why})
			continue
		}
		b.used[t.Name] = true
		b.res.Tools = append(b.res.Tools, *t)
		if setup != nil {
			b.res.Setup[t.Name] = setup
		}
	}
	if len(req.Operations) == 0 {
		b.webhooks()
	}
	if n := len(b.res.Tools); n > MaxTools {
		return nil, fault.Invalid("operations", "the document makes %d tools; at most %d are made at once: name the ones wanted in \"operations\"", n, MaxTools)
	}
	return b.res, nil
}

// checkRequest checks what the request itself says, before the document is read.
func checkRequest(req *Request) error {
	if req.Prefix != "" && !prefixPattern().MatchString(req.Prefix) {
		return fault.Invalid("prefix", "prefix %q must start with an ASCII letter or underscore and hold only ASCII letters, digits and underscores, at most 24 (tool names are at most 40 characters)", req.Prefix)
	}
	if req.BaseURL != "" {
		u, err := url.Parse(req.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fault.Invalid("base_url", "base_url %q must be an absolute http or https URL, such as https://api.example.com/v1", req.BaseURL)
		}
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(u.Path, "{}") {
			return fault.Invalid("base_url", "base_url must be a plain scheme, host and path: no credentials, query, fragment or {placeholders}")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(req.Security)) {
		if err := checkCredential(name, req.Security[name]); err != nil {
			return err
		}
	}
	return nil
}

// operations lists the document's operations, by path and then in the specification's order of
// methods, so names and their de-duplication come out the same on every import.
func operations(doc *openapi3.T) []opRef {
	var out []opRef
	if doc.Paths == nil {
		return nil
	}
	m := doc.Paths.Map()
	for _, p := range slices.Sorted(maps.Keys(m)) {
		item := m[p]
		if item == nil {
			continue
		}
		for _, method := range methods {
			if op := item.GetOperation(method); op != nil {
				out = append(out, opRef{path: p, method: method, item: item, op: op})
			}
		}
	}
	return out
}

// filter keeps the operations Request.Operations names; a name that matches none is refused.
func (b *builder) filter(ops *[]opRef) error {
	if len(b.req.Operations) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, w := range b.req.Operations {
		want[w] = false
	}
	var kept []opRef
	for _, o := range *ops {
		byPath := o.method + " " + o.path
		_, a := want[o.op.OperationID]
		_, c := want[byPath]
		if (a && o.op.OperationID != "") || c {
			want[o.op.OperationID], want[byPath] = true, true
			kept = append(kept, o)
		}
	}
	var missing []string
	for _, w := range b.req.Operations {
		if !want[w] {
			missing = append(missing, fmt.Sprintf("%q", w))
		}
	}
	if len(missing) > 0 {
		return fault.Invalid("operations", "operations names %s, which the document does not have: name an operation by its operationId or as \"METHOD /path\"", strings.Join(missing, ", "))
	}
	*ops = kept
	return nil
}

// webhooks are reported, never made: a webhook is a request the API sends, not one a tool makes.
func (b *builder) webhooks() {
	for _, name := range slices.Sorted(maps.Keys(b.doc.Webhooks)) {
		item := b.doc.Webhooks[name]
		for _, method := range methods {
			if item != nil && item.GetOperation(method) != nil {
				b.res.Skipped = append(b.res.Skipped, Skipped{Operation: "webhook " + name + " " + method,
					Reason: "a webhook is a request the API sends to its subscribers, not one a tool makes"})
			}
		}
	}
}

// make builds one operation's tool, or says why it cannot.
func (b *builder) make(o opRef) (*tool.Tool, map[string]any, string) {
	if len(o.op.Callbacks) > 0 {
		return nil, nil, "it declares callbacks (requests the API makes back to the caller), which a tool cannot receive"
	}
	base, why := b.serverOf(o)
	if why != "" {
		return nil, nil, why
	}
	setup, bound, why := b.security(o.op)
	if why != "" {
		return nil, nil, why
	}
	a := newArgs()
	if why := a.parameters(o, bound); why != "" {
		return nil, nil, why
	}
	if why := a.body(o.op); why != "" {
		return nil, nil, why
	}
	t := &tool.Tool{Name: b.name(o), Type: tool.TypeAPICall, Description: describe(o), APICall: &tool.APICallDef{
		Method: o.method, URL: base + o.path, ParamsSchema: a.schema(), ArgumentLocations: a.locs}}
	if len(a.locs) == 0 {
		t.APICall.ArgumentLocations = nil
	}
	if err := t.Validate(); err != nil {
		return nil, nil, "the tool made of it would be invalid: " + fault.Message(err)
	}
	return t, setup, ""
}

// describe is the tool's description: the operation's summary and description.
func describe(o opRef) string {
	parts := []string{}
	for _, s := range []string{o.op.Summary, o.op.Description} {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	d := strings.Join(parts, "\n\n")
	if d == "" {
		d = o.method + " " + o.path
	}
	if o.op.Deprecated {
		d = "Deprecated. " + d
	}
	return truncate(d, tool.MaxDescription)
}

// name is the tool's name: the prefix and the operationId (else the method and path) in the
// characters tool names allow, cut to 40 with a hash of the whole when longer, and numbered when
// an earlier operation of the import has it.
func (b *builder) name(o opRef) string {
	base := o.op.OperationID
	if base == "" {
		base = strings.ToLower(o.method) + "_" + o.path
	}
	n := b.req.Prefix + sanitize(base)
	if n == "" || (n[0] >= '0' && n[0] <= '9') {
		n = "_" + n
	}
	name := fit(n, "")
	for i := 2; b.used[name]; i++ {
		name = fit(n, fmt.Sprintf("_%d", i))
	}
	return name
}

// sanitize keeps ASCII letters, digits and underscores, one underscore for each run of others.
func sanitize(s string) string {
	var sb strings.Builder
	under := false
	for _, r := range s {
		ok := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok || r == '_' {
			if !under && sb.Len() > 0 {
				sb.WriteByte('_')
			}
			under = true
			continue
		}
		under = false
		sb.WriteRune(r)
	}
	return strings.TrimRight(sb.String(), "_")
}

// fit makes n+suffix at most 40 characters: a longer n keeps its start and a hash of the whole,
// so two long names that share their start stay apart.
func fit(n, suffix string) string {
	const limit = 40
	if len(n)+len(suffix) <= limit {
		return n + suffix
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(n))
	tail := fmt.Sprintf("_%08x", h.Sum32())
	return strings.TrimRight(n[:limit-len(suffix)-len(tail)], "_") + tail + suffix
}
