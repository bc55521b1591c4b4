package lambdaapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"sinew/internal/localaws/awsjson"
)

// functionConfiguration is the part of Lambda's FunctionConfiguration a local function has: its
// name, ARN, timeout and the one version there is. Local functions run in-process (or under the
// Runtime Interface Emulator), so there is no code location, role or memory setting to report.
type functionConfiguration struct {
	FunctionName  string   `json:"FunctionName"`
	FunctionArn   string   `json:"FunctionArn"`
	Runtime       string   `json:"Runtime"`
	Handler       string   `json:"Handler"`
	Timeout       int      `json:"Timeout"`
	Version       string   `json:"Version"`
	PackageType   string   `json:"PackageType"`
	State         string   `json:"State"`
	LastModified  string   `json:"LastModified"`
	Architectures []string `json:"Architectures"`
}

// serveControl answers the read-only control-plane operations a local function has:
// ListFunctions (GET /2015-03-31/functions/) and GetFunction (GET /2015-03-31/functions/{name}).
// handled is false for any other request.
func (s *Service) serveControl(w http.ResponseWriter, r *http.Request) (status int, outcome string, handled bool) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/2015-03-31/functions")
	if !ok || r.Method != http.MethodGet {
		return 0, "", false
	}
	rest = strings.TrimPrefix(rest, "/")
	if rest == "" {
		st, out := s.listFunctions(w, r.URL.Query())
		return st, out, true
	}
	if strings.Contains(rest, "/") {
		return 0, "", false
	}
	ref, err := url.PathUnescape(rest)
	if err != nil {
		return 0, "", false
	}
	_, name, aerr := s.resolve(ref, r.URL.Query().Get("Qualifier"))
	if aerr != nil {
		st, out := s.writeError(w, aerr)
		return st, out, true
	}
	st, out := writeJSON(w, map[string]any{"Configuration": s.configuration(name)})
	return st, out, true
}

// listFunctions pages through the functions in name order: Marker is the last name of the
// previous page, MaxItems 1 to 10000 (default 50).
func (s *Service) listFunctions(w http.ResponseWriter, q url.Values) (int, string) {
	limit := 50
	if v := q.Get("MaxItems"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			return s.writeError(w, errorf(http.StatusBadRequest, "ValidationException",
				"1 validation error detected: Value '%s' at 'maxItems' failed to satisfy constraint: Member must have value between 1 and 10000", awsjson.Clip(v, 50)))
		}
		limit = n
	}
	s.mu.RLock()
	names := make([]string, 0, len(s.fns))
	for n := range s.fns {
		names = append(names, n)
	}
	s.mu.RUnlock()
	slices.Sort(names)
	if m := q.Get("Marker"); m != "" {
		i, found := slices.BinarySearch(names, m)
		if !found {
			return s.writeError(w, errorf(http.StatusBadRequest, "InvalidParameterValueException", "Invalid marker: %s", awsjson.Clip(m, 200)))
		}
		names = names[i+1:]
	}
	out := map[string]any{}
	if len(names) > limit {
		names = names[:limit]
		out["NextMarker"] = names[limit-1]
	}
	cfgs := make([]functionConfiguration, 0, len(names))
	for _, n := range names {
		cfgs = append(cfgs, s.configuration(n))
	}
	out["Functions"] = cfgs
	return writeJSON(w, out)
}

func (s *Service) configuration(name string) functionConfiguration {
	timeout := MaxTimeout
	if s.timeout != nil {
		if t := s.timeout(name); t > 0 {
			timeout = t
		}
	}
	return functionConfiguration{FunctionName: name, FunctionArn: s.functionARN(name), Runtime: "provided.al2023",
		Handler: "bootstrap", Timeout: int(timeout / time.Second), Version: "$LATEST", PackageType: "Zip", State: "Active",
		LastModified: s.started.Format("2006-01-02T15:04:05.000-0700"), Architectures: []string{"arm64"}}
}

func writeJSON(w http.ResponseWriter, v any) (int, string) {
	body, err := json.Marshal(v)
	if err != nil {
		return http.StatusInternalServerError, err.Error()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return http.StatusOK, "ok"
}
