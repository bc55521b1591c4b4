package httpapi

import (
	"io"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// Limits bound what one client can hold of a local HTTP server: a slow or idle connection is
// closed, and connections past MaxConns wait in the kernel's queue until one ends.
type Limits struct {
	HeaderTimeout time.Duration // the request line and headers
	BodyTimeout   time.Duration // the whole body, from the end of the headers
	WriteTimeout  time.Duration // from the end of the headers to the end of the answer
	IdleTimeout   time.Duration // between requests on a kept-alive connection
	MaxConns      int           // connections served at once
}

// DefaultLimits suit local mode's APIs: API Gateway's 30 s integration timeout with a margin for
// the answer, and far more connections than one developer's tools open.
var DefaultLimits = Limits{HeaderTimeout: 10 * time.Second, BodyTimeout: 30 * time.Second,
	WriteTimeout: 45 * time.Second, IdleTimeout: 2 * time.Minute, MaxConns: 512}

// NewServer serves h under lim. The body has its own deadline rather than http.Server's
// ReadTimeout, which would also end a long handler's context after its body was read.
func NewServer(h http.Handler, lim Limits) *http.Server {
	return &http.Server{
		Handler:           bodyDeadline(h, lim.BodyTimeout),
		ReadHeaderTimeout: lim.HeaderTimeout,
		WriteTimeout:      lim.WriteTimeout,
		IdleTimeout:       lim.IdleTimeout,
	}
}

// LimitListener serves at most lim.MaxConns connections of l at once (no limit when 0).
func LimitListener(l net.Listener, lim Limits) net.Listener {
	if lim.MaxConns <= 0 {
		return l
	}
	return netutil.LimitListener(l, lim.MaxConns)
}

// bodyDeadline gives the reading of each request's body d; once it has been read whole, the
// connection has no read deadline until the next request's headers.
func bodyDeadline(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(d)); err == nil && r.Body != nil && r.Body != http.NoBody {
			// A copy: the server's own request keeps its body, which it checks after the handler
			// to decide whether the connection can be reused.
			r = r.WithContext(r.Context())
			r.Body = &clearAtEOF{ReadCloser: r.Body, rc: rc}
		}
		h.ServeHTTP(w, r)
	})
}

type clearAtEOF struct {
	io.ReadCloser
	rc *http.ResponseController
}

func (b *clearAtEOF) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
