// Package httprec keeps what an http.Handler answers when it is called in-process rather than by
// net/http's server.
//
// Its users are local mode's own AWS endpoints serving its functions' requests, and the MCP SDK's
// handler serving a request that reached sinew through its router. It is not net/http/httptest's
// ResponseRecorder because that is a testing package, which the Lambda functions' binaries (the api
// function serves MCP) do not link.
package httprec

import (
	"bytes"
	"net/http"
)

// Recorder is an http.ResponseWriter that keeps the status, headers and body a handler writes.
// As net/http's server does, the first WriteHeader wins and a Write without one answers 200.
type Recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

// New is an empty Recorder.
func New() *Recorder { return &Recorder{header: http.Header{}} }

// Header is the answer's header map, which the handler fills.
func (w *Recorder) Header() http.Header { return w.header }

// WriteHeader keeps the first status written.
func (w *Recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

// Write appends p to the body, answering 200 unless a status was written.
func (w *Recorder) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// Flush implements http.Flusher: the whole body is answered at once anyway.
func (w *Recorder) Flush() {}

// Status is the status written, 200 when the handler wrote none.
func (w *Recorder) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// Body is the body written so far.
func (w *Recorder) Body() []byte { return w.body.Bytes() }
