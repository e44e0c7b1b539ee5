package computeruse

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeDriver records what the tools asked of it.
type fakeDriver struct {
	mu    sync.Mutex
	calls []string
	x, y  int
	fail  error
}

func (f *fakeDriver) record(format string, args ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	return f.fail
}

func (f *fakeDriver) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeDriver) Screenshot(context.Context) (image.Image, error) {
	if err := f.record("screenshot"); err != nil {
		return nil, err
	}
	img := image.NewRGBA(image.Rect(0, 0, 64, 40))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	img.SetRGBA(3, 4, color.RGBA{0xff, 0, 0xff, 0xff})
	return img, nil
}

func (f *fakeDriver) MouseMove(_ context.Context, x, y int) error {
	f.x, f.y = x, y
	return f.record("move %d %d", x, y)
}

func (f *fakeDriver) Click(_ context.Context, x, y int, button string, double bool) error {
	return f.record("click %d %d %s %v", x, y, button, double)
}

func (f *fakeDriver) Type(_ context.Context, text string) error { return f.record("type %q", text) }
func (f *fakeDriver) Key(_ context.Context, keys string) error  { return f.record("key %s", keys) }

func (f *fakeDriver) Scroll(_ context.Context, x, y int, dir string, amount int) error {
	return f.record("scroll %d %d %s %d", x, y, dir, amount)
}

func (f *fakeDriver) CursorPosition(context.Context) (int, int, error) {
	return f.x, f.y, f.record("cursor")
}

func (f *fakeDriver) OpenURL(_ context.Context, url string) error { return f.record("open %s", url) }

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// mcpServer serves a Server on a fake driver over HTTP.
func mcpServer(t *testing.T) (*fakeDriver, string) {
	t.Helper()
	d := &fakeDriver{}
	ts := httptest.NewServer(NewServer(d, testLogger(t), "test"))
	t.Cleanup(ts.Close)
	return d, ts.URL + Path
}

// post sends body and returns the status, the content type and the body.
func post(t *testing.T, url, body string, header ...string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// rpc posts a request and returns its response, which must be 200 JSON.
func rpc(t *testing.T, url, body string) Message {
	t.Helper()
	status, ct, b := post(t, url, body)
	if status != http.StatusOK || ct != "application/json" {
		t.Fatalf("%s: HTTP %d %s: %s", body, status, ct, b)
	}
	var m Message
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: response %s: %v", body, b, err)
	}
	if m.JSONRPC != "2.0" {
		t.Fatalf("response %s is not JSON-RPC 2.0", b)
	}
	return m
}

func TestInitialize(t *testing.T) {
	_, url := mcpServer(t)
	for _, tc := range []struct{ asked, want string }{
		{"2025-11-25", "2025-11-25"},
		{"2025-06-18", "2025-06-18"},
		{"2025-03-26", "2025-03-26"},
		{"2024-11-05", "2024-11-05"},
		{"2026-07-28", "2025-11-25"}, // the stateless revision: answered with the newest handshake one
		{"1999-01-01", "2025-11-25"},
	} {
		t.Run(tc.asked, func(t *testing.T) {
			m := rpc(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+tc.asked+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			if m.Error != nil {
				t.Fatal(m.Error)
			}
			var r struct {
				ProtocolVersion string `json:"protocolVersion"`
				Capabilities    struct {
					Tools *struct{} `json:"tools"`
				} `json:"capabilities"`
				ServerInfo struct{ Name, Version string } `json:"serverInfo"`
			}
			if err := json.Unmarshal(m.Result, &r); err != nil {
				t.Fatal(err)
			}
			if r.ProtocolVersion != tc.want || r.Capabilities.Tools == nil || r.ServerInfo.Name != ServerName || r.ServerInfo.Version != "test" {
				t.Fatalf("initialize asking %s: %s", tc.asked, m.Result)
			}
			if string(m.ID) != "1" {
				t.Fatalf("id %s", m.ID)
			}
		})
	}
	t.Run("no protocolVersion", func(t *testing.T) {
		m := rpc(t, url, `{"jsonrpc":"2.0","id":"a","method":"initialize","params":{}}`)
		if m.Error == nil || m.Error.Code != CodeInvalidParams || string(m.ID) != `"a"` {
			t.Fatalf("got %+v", m)
		}
	})
}

func TestToolsList(t *testing.T) {
	_, url := mcpServer(t)
	m := rpc(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var r struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
		var schema struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s: input schema %s: %v", tool.Name, tool.InputSchema, err)
		}
	}
	want := []string{"screenshot", "mouse_move", "click", "type", "key", "scroll", "cursor_position", "open_url"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
}

// callTool calls a tool over HTTP and returns its result.
func callTool(t *testing.T, url, name, args string) CallResult {
	t.Helper()
	m := rpc(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`)
	if m.Error != nil {
		t.Fatalf("%s %s: %v", name, args, m.Error)
	}
	var r CallResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestToolsCall(t *testing.T) {
	for _, tc := range []struct {
		tool, args string
		call       string // what the driver was asked; "" for none
		text       string // the result's text
		isError    bool
	}{
		{"mouse_move", `{"x":10,"y":20}`, "move 10 20", "moved to 10,20", false},
		{"click", `{"x":1,"y":2}`, "click 1 2 left false", "clicked left at 1,2", false},
		{"click", `{"x":1,"y":2,"button":"right","double":true}`, "click 1 2 right true", "double-clicked right at 1,2", false},
		{"click", `{"x":1,"y":2,"button":"side"}`, "", `click: button "side": want left, right or middle`, true},
		{"click", `{"y":2}`, "", "click needs x and y", true},
		{"click", `{"x":-1,"y":2}`, "", "click: x and y must not be negative", true},
		{"type", `{"text":"héllo -- world"}`, `type "héllo -- world"`, "typed 14 characters", false},
		{"type", `{}`, "", "type needs text", true},
		{"key", `{"keys":"ctrl+l"}`, "key ctrl+l", "pressed ctrl+l", false},
		{"key", `{"keys":"  "}`, "", `key needs keys, such as "ctrl+l"`, true},
		{"scroll", `{"x":5,"y":6,"direction":"down","amount":4}`, "scroll 5 6 down 4", "scrolled down 4 at 5,6", false},
		{"scroll", `{"x":5,"y":6,"direction":"up"}`, "scroll 5 6 up 3", "scrolled up 3 at 5,6", false},
		{"scroll", `{"x":5,"y":6,"direction":"sideways"}`, "", `scroll: direction "sideways": want up, down, left or right`, true},
		{"scroll", `{"x":5,"y":6,"direction":"up","amount":0}`, "", "scroll: amount 0: want 1 to 100", true},
		{"open_url", `{"url":"data:text/html,hi"}`, "open data:text/html,hi", "opened data:text/html,hi", false},
		{"open_url", `{"url":"--remote-debugging-port=9222"}`, "", `open_url: "--remote-debugging-port=9222" is not a URL`, true},
		{"mouse_move", `{"x":1,"y":2,"z":3}`, "", `mouse_move: invalid arguments: json: unknown field "z"`, true},
		{"mouse_move", `{"x":"one","y":2}`, "", "", true},
	} {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			d, url := mcpServer(t)
			r := callTool(t, url, tc.tool, tc.args)
			if r.IsError != tc.isError || len(r.Content) != 1 || r.Content[0].Type != "text" {
				t.Fatalf("result %+v, want isError %v", r, tc.isError)
			}
			if tc.text != "" && r.Content[0].Text != tc.text {
				t.Errorf("text %q, want %q", r.Content[0].Text, tc.text)
			}
			var want []string
			if tc.call != "" {
				want = []string{tc.call}
			}
			if got := d.Calls(); !slices.Equal(got, want) {
				t.Errorf("driver calls %q, want %q", got, want)
			}
		})
	}
}

func TestScreenshotAndCursor(t *testing.T) {
	d, url := mcpServer(t)
	r := callTool(t, url, "screenshot", `{}`)
	if r.IsError || len(r.Content) != 2 || r.Content[0].Type != "image" || r.Content[0].MIMEType != "image/png" {
		t.Fatalf("screenshot result %+v", r)
	}
	b, err := base64.StdEncoding.DecodeString(r.Content[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 64 || img.Bounds().Dy() != 40 {
		t.Fatalf("screenshot %v", img.Bounds())
	}
	if got := color.RGBAModel.Convert(img.At(3, 4)).(color.RGBA); got != (color.RGBA{0xff, 0, 0xff, 0xff}) {
		t.Fatalf("pixel 3,4 = %v", got)
	}
	if r.Content[1].Text != "screenshot 64x40" {
		t.Fatalf("text %q", r.Content[1].Text)
	}

	callTool(t, url, "mouse_move", `{"x":12,"y":34}`)
	if r := callTool(t, url, "cursor_position", `{}`); r.IsError || r.Content[0].Text != "12,34" {
		t.Fatalf("cursor_position %+v", r)
	}
	// null and absent arguments are none.
	if r := rpc(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"cursor_position"}}`); r.Error != nil {
		t.Fatal(r.Error)
	}

	// A failing driver is the tool's error, not the protocol's.
	d.fail = errors.New("xdotool: exit status 1: Can't open display")
	r = callTool(t, url, "screenshot", `{}`)
	if !r.IsError || !strings.Contains(r.Content[0].Text, "Can't open display") {
		t.Fatalf("failing screenshot %+v", r)
	}
}

// TestProtocolErrors: JSON-RPC errors for what is not a valid request,
// with the HTTP status the transport gives them.
func TestProtocolErrors(t *testing.T) {
	_, url := mcpServer(t)
	for _, tc := range []struct {
		name, body string
		status     int
		code       int
		id         string
	}{
		{"not JSON", `{"jsonrpc":`, 400, CodeParseError, "null"},
		{"empty", ``, 200, CodeInvalidRequest, "null"},
		{"not an object", `"ping"`, 200, CodeInvalidRequest, "null"},
		{"no jsonrpc", `{"id":1,"method":"ping"}`, 200, CodeInvalidRequest, "1"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, 200, CodeInvalidRequest, "1"},
		{"no method", `{"jsonrpc":"2.0","id":1}`, 200, CodeInvalidRequest, "1"},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, 200, CodeInvalidRequest, "1"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, 200, CodeInvalidRequest, "null"},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, 200, CodeInvalidRequest, "null"},
		{"unknown method", `{"jsonrpc":"2.0","id":"x","method":"resources/list"}`, 200, CodeMethodNotFound, `"x"`},
		{"server/discover", `{"jsonrpc":"2.0","id":9,"method":"server/discover","params":{}}`, 200, CodeMethodNotFound, "9"},
		{"unknown tool", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"rm -rf"}}`, 200, CodeInvalidParams, "4"},
		{"params an array", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":["screenshot"]}`, 200, CodeInvalidParams, "4"},
		{"empty batch", `[]`, 200, CodeInvalidRequest, "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, ct, b := post(t, url, tc.body)
			if status != tc.status || ct != "application/json" {
				t.Fatalf("HTTP %d %s: %s", status, ct, b)
			}
			var m Message
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if m.Error == nil || m.Error.Code != tc.code || string(m.ID) != tc.id || m.Result != nil {
				t.Fatalf("got %s, want error %d with id %s", b, tc.code, tc.id)
			}
		})
	}
}

func TestNotificationsAndBatches(t *testing.T) {
	_, url := mcpServer(t)
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`, // a response: nothing waits for it
		`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
	} {
		if status, _, b := post(t, url, body); status != http.StatusAccepted || len(b) != 0 {
			t.Errorf("%s: HTTP %d %s, want 202 and no body", body, status, b)
		}
	}
	status, _, b := post(t, url, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"nope"}]`)
	var out []Message
	if status != 200 || json.Unmarshal(b, &out) != nil || len(out) != 2 {
		t.Fatalf("batch: HTTP %d %s", status, b)
	}
	if string(out[0].ID) != "1" || string(out[0].Result) != "{}" || string(out[1].ID) != "2" || out[1].Error.Code != CodeMethodNotFound {
		t.Fatalf("batch answered %s", b)
	}
}

// TestHTTPRefusals: what the transport refuses before JSON-RPC.
func TestHTTPRefusals(t *testing.T) {
	_, url := mcpServer(t)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	do := func(method, path, body string, header ...string) (int, http.Header) {
		req, err := http.NewRequest(method, strings.TrimSuffix(url, Path)+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			if header[i] == "Host" {
				req.Host = header[i+1]
				continue
			}
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	for _, tc := range []struct {
		name   string
		method string
		path   string
		body   string
		header []string
		status int
	}{
		{"ping", "POST", Path, ping, nil, 200},
		{"localhost", "POST", Path, ping, []string{"Host", "localhost:8931"}, 200},
		{"GET opens no stream", "GET", Path, "", nil, 405},
		{"DELETE", "DELETE", Path, "", nil, 405},
		{"another path", "POST", "/", ping, nil, 404},
		{"a web page", "POST", Path, ping, []string{"Origin", "http://evil.example"}, 403},
		{"a page on localhost", "POST", Path, ping, []string{"Origin", "http://127.0.0.1:8000"}, 403},
		{"DNS rebinding", "POST", Path, ping, []string{"Host", "evil.example:8931"}, 403},
		{"text/plain", "POST", Path, ping, []string{"Content-Type", "text/plain"}, 415},
		{"unknown protocol version", "POST", Path, ping, []string{"MCP-Protocol-Version", "2030-01-01"}, 400},
		{"known protocol version", "POST", Path, ping, []string{"MCP-Protocol-Version", "2025-06-18"}, 200},
		{"too large", "POST", Path, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", maxMessage) + `"}}`, nil, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, h := do(tc.method, tc.path, tc.body, tc.header...)
			if status != tc.status {
				t.Fatalf("HTTP %d, want %d", status, tc.status)
			}
			if status == 405 && h.Get("Allow") != "POST" {
				t.Fatalf("Allow %q", h.Get("Allow"))
			}
		})
	}
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8931": true, "127.0.0.1": true, "localhost": true, "LOCALHOST:1": true,
		"[::1]:8931": true, "::1": true, "127.1.2.3:80": true,
		"10.0.0.1:8931": false, "evil.example": false, "localhost.evil.example:8931": false, "": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v", host, got)
		}
	}
}

func TestStdio(t *testing.T) {
	d := &fakeDriver{}
	s := NewServer(d, testLogger(t), "test")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		``,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"key","arguments":{"keys":"Return"}}}`,
		`{not json`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := s.ServeStdio(t.Context(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines out:\n%s", len(lines), out.String())
	}
	var ms []Message
	for _, l := range lines {
		var m Message
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		ms = append(ms, m)
	}
	if !strings.Contains(string(ms[0].Result), `"protocolVersion":"2025-06-18"`) ||
		!strings.Contains(string(ms[1].Result), "pressed Return") ||
		ms[2].Error == nil || ms[2].Error.Code != CodeParseError ||
		string(ms[3].ID) != "3" || string(ms[3].Result) != "{}" {
		t.Fatalf("stdio answered:\n%s", out.String())
	}
	if got := d.Calls(); !slices.Equal(got, []string{"key Return"}) {
		t.Fatalf("driver calls %q", got)
	}
}

func TestStdioStopsWithContext(t *testing.T) {
	s := NewServer(&fakeDriver{}, testLogger(t), "test")
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(ctx, pr, io.Discard) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("ServeStdio after cancel: %v", err)
	}
	pw.Close() // ends the reader
}
