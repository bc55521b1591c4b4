package remotebrowser_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sinew/internal/fault"
	remotebrowser "sinew/internal/integrations/providers/remote_browser"
	"sinew/internal/testenv/chromium"
)

// report posts what a script saw to the site, from a page, a frame or a worker.
const report = `const report = (what) => fetch("{site}/event", {method: "POST", body: what});`

// TestWebSocketsReachNoRefusedAddress: a page of the permitted site opens a WebSocket to the
// internal address while sinew is connected, from the page, a frame, a dedicated worker, a shared
// worker and a service worker. No interception can pause a WebSocket's handshake, so each must
// fail before it is sent: the internal server never sees one. The page holds its load (and so the
// navigate call) until the script says the socket failed or opened.
func TestWebSocketsReachNoRefusedAddress(t *testing.T) {
	s := newSites(t, chromium.Start(t))
	probe := report + `try {
  const ws = new WebSocket("{ws}/socket"); ws.onopen = () => report("ws:open"); ws.onerror = () => report("ws:error");
} catch (e) { report("ws:none"); }`
	s.set("/ws.js", probe)
	s.set("/sw-ws.js", probe)
	tests := []struct{ name, page string }{
		{"the page", `<script>` + probe + `</script>`},
		{"a frame", `<iframe srcdoc="<script>` + strings.ReplaceAll(probe, `"`, "&quot;") + `</script>"></iframe>`},
		{"a dedicated worker", `<script>new Worker("/ws.js")</script>`},
		{"a shared worker", `<script>new SharedWorker("/ws.js")</script>`},
		{"a service worker", `<script>navigator.serviceWorker.register("/sw-ws.js", {scope: "/ws-scope/"})</script>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.reset(t)
			s.set("/", `<html><body><img src="/hold?for=ws:">`+tc.page+`</body></html>`)
			s.loadHeld(t, "/", "ws:", "WebSocket handshake")
		})
	}
}

// TestWorkersReachNoRefusedAddress: requests that workers make themselves while sinew is connected,
// by workers that start during the call (a service worker's fetch as it installs, a script it
// imports, a shared and a dedicated worker's fetch) and by workers that started in an earlier call
// and are asked, by a click, to fetch (a service worker answering the page's request, a shared and
// a dedicated worker told to by a message). None may reach the internal address. Each page holds
// its load until its workers report, so that what they do happens during the call; each service
// worker has a scope of its own, so that none answers another case's page.
func TestWorkersReachNoRefusedAddress(t *testing.T) {
	s := newSites(t, chromium.Start(t))
	done := `.then(() => report("w:reached"), () => report("w:refused"))`
	s.set("/install.js", report+`self.addEventListener("install", (e) => e.waitUntil(fetch("{internal}/install")`+done+`));`)
	s.set("/import.js", report+`try { importScripts("{internal}/import.js"); report("w:reached"); } catch (e) { report("w:refused"); }`)
	s.set("/proxy.js", `self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim()));
self.addEventListener("fetch", (e) => { if (e.request.url.endsWith("/proxied")) e.respondWith(fetch("{internal}/proxied")); });`)
	s.set("/fetch.js", report+`fetch("{internal}/worker")`+done+`;`)
	s.set("/on-message.js", report+`const go = () => fetch("{internal}/prompted")`+done+`;
if ("onconnect" in self) self.onconnect = (e) => { e.ports[0].onmessage = go; report("ready"); };
else { self.onmessage = go; report("ready"); }`)
	register := func(script string) string {
		return `<script>` + report + `navigator.serviceWorker.register("/` + script + `", {scope: "/` + script + `/"}).catch(() => report("w:refused"));</script>`
	}
	button := `<button style="position:fixed;inset:0;width:100%;height:100%" onclick="go()">go</button>`
	tests := []struct {
		name, path, page string // a service worker's page is in its scope
		later            bool   // the page reports "ready", and a click in a later call sets the worker off
		stopped          bool   // ... or would: the worker is stopped when that call connects
	}{
		{"a service worker's install", "/install.js/", register("install.js"), false, false},
		{"a service worker's import", "/import.js/", register("import.js"), false, false},
		{"a shared worker", "/page", `<script>new SharedWorker("/fetch.js")</script>`, false, false},
		{"a dedicated worker", "/page", `<script>new Worker("/fetch.js")</script>`, false, false},
		{"a service worker of an earlier call answering the page", "/proxy.js/", button + `<script>` + report + `
const go = () => fetch("proxied")` + done + `;
navigator.serviceWorker.addEventListener("controllerchange", () => report("ready"));
navigator.serviceWorker.register("/proxy.js", {scope: "/proxy.js/"});</script>`, true, false},
		{"a shared worker of an earlier call", "/page", button + `<script>const w = new SharedWorker("/on-message.js"); const go = () => w.port.postMessage("go");</script>`, true, true},
		{"a dedicated worker of an earlier call", "/page", button + `<script>const w = new Worker("/on-message.js"); const go = () => w.postMessage("go");</script>`, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.reset(t)
			hold := map[bool]string{false: "w:", true: "ready"}[tc.later]
			s.set(tc.path, `<html><body><img src="/hold?for=`+hold+`">`+tc.page+`</body></html>`)
			s.loadHeld(t, tc.path, hold, "worker request")
			if !tc.later {
				return
			}
			worker := s.site.URL + "/on-message.js"
			if tc.stopped && !s.targetAt(t, "shared_worker", worker) {
				t.Fatal("the shared worker does not run after the call that started it")
			}
			if _, err := s.do(remotebrowser.ActionLeftClick, ""); err != nil {
				t.Fatal(err)
			}
			if tc.stopped {
				if s.targetAt(t, "shared_worker", worker) {
					t.Fatal("the shared worker of an earlier call still runs")
				}
			} else if evs := s.wait("w:", 5*time.Second); !slices.ContainsFunc(evs, func(e string) bool { return strings.HasPrefix(e, "w:") }) {
				t.Fatalf("the worker never reported: %q", evs)
			}
			if n := s.hits.Load(); n != 0 {
				t.Fatalf("%d worker request(s) reached the internal address", n)
			}
		})
	}
}

// loadHeld navigates to path, whose page holds its load (and so the call) until its script reports
// an event that starts with prefix, and checks that the report came during the call and that no
// request (what) reached the internal address.
func (s *sites) loadHeld(t *testing.T, path, prefix, what string) {
	t.Helper()
	if _, err := s.do(remotebrowser.ActionNavigate, s.site.URL+path); err != nil {
		t.Fatal(err)
	}
	if evs := s.wait(prefix, 0); !slices.ContainsFunc(evs, func(e string) bool { return strings.HasPrefix(e, prefix) }) {
		t.Fatalf("the script never reported during the call: %q", evs)
	}
	if n := s.hits.Load(); n != 0 {
		t.Fatalf("%d %s(s) reached the internal address", n, what)
	}
}

// TestDownloadsSaveNothing: a page that downloads, every way it can (navigate to an attachment, a
// page that moves to one, a link with download, a blob and a data: URL the page makes), leaves no
// file in the browser's HOME (its Downloads folder) or working folder, and the call says that it
// refused the download: as its error when the page navigated to was the download, else in the
// output's error field beside the action's own output.
func TestDownloadsSaveNothing(t *testing.T) {
	b := chromium.Start(t)
	s := newSites(t, b)
	full := `style="position:fixed;inset:0;width:100%;height:100%;display:block"`
	tests := []struct {
		name  string
		page  string // "" to navigate to the attachment itself
		click bool
	}{
		{"navigate to an attachment", "", false},
		{"a page that moves to one", `<script>location = "/attach";</script>`, false},
		{"a link with download", `<a download href="/attach" ` + full + `>get</a>`, true},
		{"a blob the page makes", `<a id="get" download="` + downloadName + `" ` + full + `>get</a><script>document.getElementById("get").href = URL.createObjectURL(new Blob(["` + downloadBody + `"]));</script>`, true},
		{"a data: URL", `<a download="` + downloadName + `" href="data:text/plain,` + downloadBody + `" ` + full + `>get</a>`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.reset(t)
			for f := savedDownload(t, b, 0); f != ""; f = savedDownload(t, b, 0) {
				if err := os.Remove(f); err != nil { // an earlier case's, saved all the same
					t.Fatal(err)
				}
			}
			start := s.site.URL + "/attach"
			if tc.page != "" {
				s.set("/download", "<html><body>"+tc.page+"</body></html>")
				start = s.site.URL + "/download"
			}
			out, err := s.do(remotebrowser.ActionNavigate, start)
			if tc.click {
				if err != nil {
					t.Fatal(err)
				}
				out, err = s.do(remotebrowser.ActionLeftClick, "")
			}
			said := ""
			if err != nil {
				said = fault.Message(err)
			} else if out.Error != nil {
				said = *out.Error
			}
			if (err != nil && !fault.Is(err, fault.Forbidden)) || !strings.Contains(said, "refused to download") || !strings.Contains(said, downloadName) {
				t.Errorf("the call did not say it refused the download: err = %v, output error %q", err, said)
			}
			if f := savedDownload(t, b, time.Second); f != "" {
				t.Fatalf("the download was saved as %s", f)
			}
		})
	}
}

// savedDownload looks for the download, by name or content, in the browser's HOME and working
// folder until wait has passed, and names the first file found.
func savedDownload(t *testing.T, b *chromium.Browser, wait time.Duration) string {
	t.Helper()
	for deadline := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
		var found string
		for _, dir := range []string{"home", "work"} {
			_ = filepath.WalkDir(filepath.Join(b.Dir, dir), func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || found != "" {
					return nil
				}
				if strings.Contains(d.Name(), strings.TrimSuffix(downloadName, ".txt")) {
					found = path
				} else if info, err := d.Info(); err == nil && info.Size() < 1<<20 {
					if body, err := os.ReadFile(path); err == nil && bytes.Contains(body, []byte(downloadBody)) {
						found = path
					}
				}
				return nil
			})
		}
		if found != "" || time.Now().After(deadline) {
			return found
		}
	}
}
