package servertest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	apispec "github.com/paddockhq/paddock/api"
)

// The document as a router, parsed once per test binary.
var (
	specOnce   sync.Once
	specRouter routers.Router
	specErr    error
)

func loadSpecRouter() (routers.Router, error) {
	specOnce.Do(func() {
		raw, err := apispec.JSON()
		if err != nil {
			specErr = err
			return
		}
		doc, err := openapi3.NewLoader().LoadFromData(raw)
		if err != nil {
			specErr = err
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			specErr = fmt.Errorf("api/openapi.yaml is not valid: %w", err)
			return
		}
		doc.Servers = nil // match requests to any test server
		specRouter, specErr = gorillamux.NewRouter(doc)
	})
	return specRouter, specErr
}

// specCheck holds every request a test makes, and every answer it gets,
// to api/openapi.yaml: a request the document allows must get a documented
// status with a body of the documented schema; one it forbids must get a
// 4xx. So the document cannot drift from the code. JSON bodies are checked
// whole; streamed bodies (NDJSON, octet streams, tar) by status and
// content type; a WebSocket upgrade by its request only.
type specCheck struct {
	router routers.Router

	mu       sync.Mutex
	failures []string
}

func newSpecCheck(t testing.TB) *specCheck {
	t.Helper()
	r, err := loadSpecRouter()
	if err != nil {
		t.Fatal(err)
	}
	c := &specCheck{router: r}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, f := range c.failures {
			t.Errorf("OpenAPI contract: %s", f)
		}
	})
	return c
}

func (c *specCheck) fail(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.failures) < 50 {
		c.failures = append(c.failures, fmt.Sprintf(format, args...))
	}
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

func (c *specCheck) wrap(h http.Handler, skip func(*http.Request) bool) http.Handler {
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if skip(r) {
			// The proxy to sandbox ports: the sandbox's app answers, not
			// the API the document describes.
			h.ServeHTTP(w, r)
			return
		}
		what := r.Method + " " + r.URL.Path
		route, params, err := c.router.FindRoute(r)
		var reqErr error
		if err != nil {
			reqErr = fmt.Errorf("no such operation: %w", err)
		} else {
			// A JSON body is read and checked; any other (a file, a tar
			// stream, possibly gigabytes) is hidden from the validator,
			// which would otherwise read it into memory, and left to stream.
			var body []byte
			orig := r.Body
			jsonBody := isJSON(r.Header.Get("Content-Type"))
			if jsonBody && r.Body != nil {
				body, _ = io.ReadAll(io.LimitReader(r.Body, 4<<20))
				r.Body = io.NopCloser(bytes.NewReader(body))
			} else {
				r.Body = http.NoBody
			}
			o := *opts
			o.ExcludeRequestBody = !jsonBody
			reqErr = openapi3filter.ValidateRequest(r.Context(), &openapi3filter.RequestValidationInput{
				Request: r, PathParams: params, Route: route, Options: &o,
			})
			if jsonBody {
				r.Body = io.NopCloser(bytes.NewReader(body))
			} else {
				r.Body = orig
			}
		}
		rec := &specRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		switch {
		case rec.hijacked:
			return
		case reqErr != nil:
			if status < 400 || status >= 500 {
				c.fail("%s: the document forbids this request, yet it was answered %d: %v", what, status, reqErr)
			}
			return
		}
		o := *opts
		o.IncludeResponseStatus = true
		o.ExcludeResponseBody = !isJSON(rec.Header().Get("Content-Type")) || rec.truncated
		err = openapi3filter.ValidateResponse(r.Context(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: &o},
			Status:                 status,
			Header:                 rec.Header(),
			Body:                   io.NopCloser(bytes.NewReader(rec.body.Bytes())),
			Options:                &o,
		})
		if err != nil {
			c.fail("%s: the answer %d does not match the document: %v", what, status, err)
		}
	})
}

// specRecorder passes a response through and keeps what the check needs:
// its status and, for a JSON body, the body (up to a bound).
type specRecorder struct {
	http.ResponseWriter
	status    int
	body      bytes.Buffer
	truncated bool
	hijacked  bool
}

const maxCheckedBody = 8 << 20

func (r *specRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *specRecorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if isJSON(r.Header().Get("Content-Type")) {
		if r.body.Len()+len(p) <= maxCheckedBody {
			r.body.Write(p)
		} else {
			r.truncated = true
		}
	}
	return r.ResponseWriter.Write(p)
}

func (r *specRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *specRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := r.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("the response writer cannot be hijacked")
	}
	r.hijacked = true
	return hj.Hijack()
}

// Unwrap lets http.ResponseController reach the real writer.
func (r *specRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
