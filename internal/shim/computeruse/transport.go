package computeruse

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
)

// maxMessage bounds one message on either transport.
const maxMessage = 4 << 20

// Path is where the Streamable HTTP transport serves.
const Path = "/mcp"

// ServeHTTP serves MCP's Streamable HTTP transport on Path: a POST carries
// one JSON-RPC message (or a batch); requests are answered with one
// application/json body, notifications and responses with 202 and none.
// The server opens no event stream (GET is 405) and keeps no session.
//
// Only local clients that are not web pages get in: the Host must be a
// loopback name (no DNS rebinding), and a request carrying an Origin —
// which a browser adds, and the sandbox has a browser that loads any page
// — is refused, so a page cannot drive the mouse and keyboard.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		http.NotFound(w, r)
		return
	}
	if !loopbackHost(r.Host) {
		httpError(w, http.StatusForbidden, "the MCP server answers only on a loopback address")
		return
	}
	if r.Header.Get("Origin") != "" {
		httpError(w, http.StatusForbidden, "requests from web pages are refused")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpError(w, http.StatusMethodNotAllowed, "POST JSON-RPC messages; this server opens no event stream")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, "the body must be application/json")
		return
	}
	if v := r.Header.Get("MCP-Protocol-Version"); v != "" && !slices.Contains(ProtocolVersions, v) {
		writeJSON(w, http.StatusBadRequest, encode(errorResponse(nil, CodeInvalidRequest, "unsupported MCP-Protocol-Version %q (supported: %s)", v, strings.Join(ProtocolVersions, ", "))))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxMessage))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, "the message is too large")
			return
		}
		httpError(w, http.StatusBadRequest, "reading the body failed")
		return
	}
	resp := s.HandleRaw(r.Context(), body)
	switch {
	case resp == nil:
		w.WriteHeader(http.StatusAccepted)
	case IsParseError(resp):
		writeJSON(w, http.StatusBadRequest, resp)
	default:
		writeJSON(w, http.StatusOK, resp)
	}
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// httpError answers a request refused before JSON-RPC: a JSON-RPC error
// without an id, as the transport allows.
func httpError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, encode(errorResponse(nil, CodeInvalidRequest, "%s", msg)))
}

// loopbackHost reports whether a Host header names this machine's
// loopback: localhost or a loopback address, with or without a port.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// ServeStdio serves the stdio transport: one JSON-RPC message (or batch)
// per line on in, each response one line on out. It returns nil at the
// end of in, or ctx's error.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(br)
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErr <- err
				}
				return
			}
		}
	}()
	bw := bufio.NewWriter(out)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case line, ok := <-lines:
			if !ok {
				select {
				case err := <-readErr:
					return err
				default:
					return nil
				}
			}
			resp := s.HandleRaw(ctx, line)
			if resp == nil {
				continue
			}
			bw.Write(resp)
			bw.WriteByte('\n')
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
}

// errLineTooLong is a stdio message over maxMessage.
var errLineTooLong = errors.New("a message longer than 4 MiB")

// readLine reads one line, without its newline, of at most maxMessage
// bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxMessage {
			return nil, errLineTooLong
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}
