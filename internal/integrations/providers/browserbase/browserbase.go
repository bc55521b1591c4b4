// Package browserbase is the browserbase integration: the six methods Julep implements over the
// Browserbase API v1, with the key in X-BB-API-Key. list_sessions (the default),
// create_session, get_session, complete_session (POST status REQUEST_RELEASE), get_live_urls (the
// session's debug URLs) and install_extension_from_github (download the tag's zip from GitHub, then
// upload it to /v1/extensions).
//
// Choices where Julep's typespec and service differ or misbehave: the typespec's other browserbase
// methods (get_connect_url, create_context, ...) are not offered, as the service does not implement
// them; create_session sends timeout, keepAlive and proxies too (Julep drops them); complete_session
// reports a refusal as a typed error, not {success:false}; install_extension_from_github needs ref
// (Julep would download ".../None.zip"); date fields are passed as the API writes them. setup.api_url
// replaces the API base URL when given (through the guard); setup.connect_url is accepted and unused.
// GitHub's base URL is SINEW_BROWSERBASE_GITHUB_URL (default https://github.com).
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/browserbase.py
package browserbase

import (
	"bytes"
	"context"
	"mime/multipart"
	"regexp"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/integrations"
)

// maxExtension bounds a downloaded extension archive.
const maxExtension = 50 << 20

// Setup of the browserbase provider.
type Setup struct {
	APIKey     string `json:"api_key" jsonschema:"minLength=1" jsonschema_description:"Browserbase API key." sinew:"secret"`
	ProjectID  string `json:"project_id" jsonschema:"minLength=1" jsonschema_description:"Browserbase project id."`
	APIURL     string `json:"api_url,omitempty" jsonschema:"format=uri" jsonschema_description:"Another Browserbase API base URL." sinew:"endpoint"`
	ConnectURL string `json:"connect_url,omitempty" jsonschema_description:"Accepted for compatibility; unused." sinew:"endpoint"`
}

// ListSessionsArguments of list_sessions.
type ListSessionsArguments struct {
	Status string `json:"status,omitempty" jsonschema:"enum=RUNNING,enum=ERROR,enum=TIMED_OUT,enum=COMPLETED" jsonschema_description:"Only sessions in this state."`
}

// CreateSessionArguments of create_session.
type CreateSessionArguments struct {
	ProjectID       string         `json:"projectId,omitempty" jsonschema_description:"The project (default: setup.project_id)."`
	ExtensionID     string         `json:"extensionId,omitempty" jsonschema_description:"An uploaded extension to load."`
	BrowserSettings map[string]any `json:"browserSettings,omitempty" jsonschema_description:"Browser settings (viewport, fingerprint, context, ...)."`
	Timeout         int            `json:"timeout,omitempty" jsonschema:"minimum=60,maximum=21600,default=3600" jsonschema_description:"Session timeout in seconds."`
	KeepAlive       bool           `json:"keepAlive,omitempty" jsonschema:"default=false"`
	Proxies         any            `json:"proxies,omitempty" jsonschema:"oneof_type=boolean;array,default=false" jsonschema_description:"true, or a list of proxy configurations."`
}

// SessionArguments name one session.
type SessionArguments struct {
	ID string `json:"id" jsonschema:"minLength=1"`
}

// CompleteSessionArguments of complete_session.
type CompleteSessionArguments struct {
	ID     string `json:"id" jsonschema:"minLength=1"`
	Status string `json:"status,omitempty" jsonschema:"enum=REQUEST_RELEASE,default=REQUEST_RELEASE"`
}

// ExtensionArguments of install_extension_from_github.
type ExtensionArguments struct {
	RepositoryName string `json:"repositoryName" jsonschema:"pattern=^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$" jsonschema_description:"owner/repository on GitHub."`
	Ref            string `json:"ref,omitempty" jsonschema_description:"The tag to install."`
}

// Session is a session as Julep's create_session and get_session return it.
type Session struct {
	ID          string   `json:"id"`
	ConnectURL  *string  `json:"connect_url,omitempty"`
	CreatedAt   *string  `json:"createdAt"`
	ProjectID   *string  `json:"projectId"`
	StartedAt   *string  `json:"startedAt"`
	EndedAt     *string  `json:"endedAt"`
	ExpiresAt   *string  `json:"expiresAt"`
	Status      *string  `json:"status"`
	ProxyBytes  *int64   `json:"proxyBytes"`
	AvgCPUUsage *float64 `json:"avgCpuUsage"`
	MemoryUsage *float64 `json:"memoryUsage"`
	KeepAlive   *bool    `json:"keepAlive"`
	ContextID   *string  `json:"contextId"`
}

// ListSessionsOutput of list_sessions: the API's session objects.
type ListSessionsOutput struct {
	Sessions []map[string]any `json:"sessions"`
}

// CompleteSessionOutput of complete_session.
type CompleteSessionOutput struct {
	Success bool `json:"success"`
}

// LiveURLsOutput of get_live_urls: the API's debug object.
type LiveURLsOutput struct {
	URLs map[string]any `json:"urls"`
}

// ExtensionOutput of install_extension_from_github.
type ExtensionOutput struct {
	ID string `json:"id"`
}

func base(env integrations.Env, s Setup) string {
	if s.APIURL != "" {
		return strings.TrimRight(s.APIURL, "/")
	}
	return env.BaseURL
}

func auth(s Setup) map[string][]string { return map[string][]string{"X-BB-API-Key": {s.APIKey}} }

func listSessions(ctx context.Context, env integrations.Env, s Setup, a ListSessionsArguments) (ListSessionsOutput, error) {
	req := integrations.Request{URL: base(env, s) + "/v1/sessions", Header: auth(s)}
	if a.Status != "" {
		req.Query = map[string][]string{"status": {a.Status}}
	}
	var sessions []map[string]any
	if err := env.DoJSON(ctx, req, &sessions); err != nil {
		return ListSessionsOutput{}, err
	}
	if sessions == nil {
		sessions = []map[string]any{}
	}
	return ListSessionsOutput{Sessions: sessions}, nil
}

// apiSession is the API's session object.
type apiSession struct {
	Session
	ConnectURLAPI *string `json:"connectUrl"`
}

func createSession(ctx context.Context, env integrations.Env, s Setup, a CreateSessionArguments) (Session, error) {
	project := a.ProjectID
	if project == "" {
		project = s.ProjectID
	}
	settings := a.BrowserSettings
	if settings == nil {
		settings = map[string]any{}
	}
	body := map[string]any{"projectId": project, "browserSettings": settings, "timeout": a.Timeout, "keepAlive": a.KeepAlive}
	if a.ExtensionID != "" {
		body["extensionId"] = a.ExtensionID
	}
	if a.Proxies != nil && a.Proxies != false {
		body["proxies"] = a.Proxies
	}
	var r apiSession
	if err := env.DoJSON(ctx, integrations.Request{Method: "POST", URL: base(env, s) + "/v1/sessions", Header: auth(s), JSON: body}, &r); err != nil {
		return Session{}, err
	}
	out := r.Session
	out.ConnectURL = r.ConnectURLAPI
	return out, nil
}

func getSession(ctx context.Context, env integrations.Env, s Setup, a SessionArguments) (Session, error) {
	var r apiSession
	if err := env.DoJSON(ctx, integrations.Request{URL: integrations.JoinURL(base(env, s), "v1", "sessions", a.ID), Header: auth(s)}, &r); err != nil {
		return Session{}, err
	}
	return r.Session, nil
}

func completeSession(ctx context.Context, env integrations.Env, s Setup, a CompleteSessionArguments) (CompleteSessionOutput, error) {
	body := map[string]any{"projectId": s.ProjectID, "status": "REQUEST_RELEASE"}
	if err := env.DoJSON(ctx, integrations.Request{Method: "POST", URL: integrations.JoinURL(base(env, s), "v1", "sessions", a.ID), Header: auth(s), JSON: body}, nil); err != nil {
		return CompleteSessionOutput{}, err
	}
	return CompleteSessionOutput{Success: true}, nil
}

func getLiveURLs(ctx context.Context, env integrations.Env, s Setup, a SessionArguments) (LiveURLsOutput, error) {
	var urls map[string]any
	if err := env.DoJSON(ctx, integrations.Request{URL: integrations.JoinURL(base(env, s), "v1", "sessions", a.ID, "debug"), Header: auth(s)}, &urls); err != nil {
		return LiveURLsOutput{}, err
	}
	return LiveURLsOutput{URLs: urls}, nil
}

var refRE = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_./-]*$`)

func installExtension(ctx context.Context, env integrations.Env, s Setup, a ExtensionArguments) (ExtensionOutput, error) {
	if a.Ref == "" {
		return ExtensionOutput{}, fault.Invalid("arguments.ref", "arguments.ref (the tag to install) is required")
	}
	if !refRE.MatchString(a.Ref) || strings.Contains(a.Ref, "..") {
		return ExtensionOutput{}, fault.Invalid("arguments.ref", "arguments.ref is not a tag name")
	}
	gh := env.Endpoint("GITHUB_URL", "https://github.com")
	zipURL := gh + "/" + a.RepositoryName + "/archive/refs/tags/" + a.Ref + ".zip"
	zip, err := env.Do(ctx, integrations.Request{URL: zipURL, Header: map[string][]string{"Accept": {"application/zip, application/octet-stream"}}, MaxBytes: maxExtension})
	if err != nil {
		return ExtensionOutput{}, &fault.Error{Kind: fault.KindOf(err), Msg: "downloading " + a.RepositoryName + "@" + a.Ref + " from GitHub: " + fault.Message(err), Err: err}
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", strings.ReplaceAll(a.RepositoryName, "/", "-")+"-"+strings.ReplaceAll(a.Ref, "/", "-")+".zip")
	if err != nil {
		return ExtensionOutput{}, fault.Wrap(fault.Internal, err, "could not build the upload")
	}
	_, _ = fw.Write(zip.Body)
	if err := mw.Close(); err != nil {
		return ExtensionOutput{}, fault.Wrap(fault.Internal, err, "could not build the upload")
	}
	var r struct {
		ID string `json:"id"`
	}
	if err := env.DoJSON(ctx, integrations.Request{Method: "POST", URL: base(env, s) + "/v1/extensions", Header: auth(s), Body: body.Bytes(), ContentType: mw.FormDataContentType()}, &r); err != nil {
		return ExtensionOutput{}, err
	}
	if r.ID == "" {
		return ExtensionOutput{}, fault.New(fault.Provider, "Browserbase accepted the extension without an id")
	}
	return ExtensionOutput{ID: r.ID}, nil
}

// Provider is the browserbase provider.
var Provider = &integrations.Provider{
	Name:         "browserbase",
	FriendlyName: "BrowserBase",
	URL:          "https://browserbase.com/",
	Docs:         "https://docs.browserbase.com/reference/api/overview",
	Icon:         "https://browserbase.com/favicon.ico",
	BaseURL:      "https://api.browserbase.com",
	Methods: []*integrations.Method{
		integrations.NewMethod("list_sessions", "List sessions in Browserbase", listSessions),
		integrations.NewMethod("create_session", "Create a session in Browserbase", createSession),
		integrations.NewMethod("get_session", "Get a session in Browserbase", getSession),
		integrations.NewMethod("complete_session", "Complete a session in Browserbase", completeSession),
		integrations.NewMethod("get_live_urls", "Get sessions' live urls in Browserbase", getLiveURLs),
		integrations.NewMethod("install_extension_from_github", "Install an extension from GitHub to the browserbase context", installExtension),
	},
}
