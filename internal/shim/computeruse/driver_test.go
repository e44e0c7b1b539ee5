package computeruse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fakeRunner records command lines and answers with canned output.
type fakeRunner struct {
	runs [][]string
	out  map[string][]byte // by command name
}

func (r *fakeRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	r.runs = append(r.runs, append([]string{name}, args...))
	return r.out[name], nil
}

func TestXDriverCommands(t *testing.T) {
	r := &fakeRunner{out: map[string][]byte{
		"xdotool": []byte("X=640\nY=400\nSCREEN=0\nWINDOW=123\n"),
		"xwd":     makeXWD(xwdSpec{w: 2, h: 1, bpp: 32, masks: rgbMasks}, []uint32{0xff00ff, 0x00ff00}),
	}}
	d := &XDriver{Display: ":99", Runner: r}
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	img, err := d.Screenshot(ctx)
	must(err)
	if img.Bounds().Dx() != 2 {
		t.Fatalf("screenshot %v", img.Bounds())
	}
	must(d.MouseMove(ctx, 1, 2))
	must(d.Click(ctx, 3, 4, "right", false))
	must(d.Click(ctx, 3, 4, "left", true))
	must(d.Type(ctx, "-n hello"))
	must(d.Key(ctx, "ctrl+l  Return"))
	must(d.Scroll(ctx, 5, 6, "down", 2))
	must(d.Scroll(ctx, 5, 6, "left", 1))
	x, y, err := d.CursorPosition(ctx)
	must(err)
	if x != 640 || y != 400 {
		t.Fatalf("cursor %d,%d", x, y)
	}
	want := [][]string{
		{"xwd", "-root", "-silent", "-display", ":99"},
		{"xdotool", "mousemove", "--sync", "1", "2"},
		{"xdotool", "mousemove", "--sync", "3", "4", "click", "3"},
		{"xdotool", "mousemove", "--sync", "3", "4", "click", "--repeat", "2", "--delay", "80", "1"},
		{"xdotool", "type", "--delay", "12", "--", "-n hello"},
		{"xdotool", "key", "--delay", "50", "--", "ctrl+l", "Return"},
		{"xdotool", "mousemove", "--sync", "5", "6", "click", "--repeat", "2", "--delay", "30", "5"},
		{"xdotool", "mousemove", "--sync", "5", "6", "click", "--repeat", "1", "--delay", "30", "6"},
		{"xdotool", "getmouselocation", "--shell"},
	}
	if len(r.runs) != len(want) {
		t.Fatalf("ran %q", r.runs)
	}
	for i := range want {
		if !slices.Equal(r.runs[i], want[i]) {
			t.Errorf("run %d: %q, want %q", i, r.runs[i], want[i])
		}
	}
	if err := d.Click(ctx, 1, 1, "up", false); err == nil {
		t.Error("a click of the wheel's button was accepted")
	}
	if err := d.Scroll(ctx, 1, 1, "sideways", 1); err == nil {
		t.Error("scrolling sideways was accepted")
	}
	if err := d.Key(ctx, " "); err == nil {
		t.Error("no keys were accepted")
	}
}

func TestParseMouseLocation(t *testing.T) {
	if x, y, err := parseMouseLocation([]byte("X=0\nY=799\n")); err != nil || x != 0 || y != 799 {
		t.Fatalf("%d,%d %v", x, y, err)
	}
	if _, _, err := parseMouseLocation([]byte("Error: Can't open display\n")); err == nil {
		t.Fatal("no location was read as one")
	}
}

// TestOpenURL: a URL goes to the running browser's DevTools endpoint, and
// never starts a browser: without one, or with the file of one that died,
// it is ErrNoBrowser.
func TestOpenURL(t *testing.T) {
	profile := t.TempDir()
	r := &fakeRunner{}
	d := &XDriver{Display: ":99", Runner: r, ProfileDir: profile}
	if err := d.OpenURL(t.Context(), "about:blank"); !errors.Is(err, ErrNoBrowser) || len(r.runs) != 0 {
		t.Fatalf("without a browser: %v, ran %q", err, r.runs)
	}
	// The endpoint's file names a port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if err := os.WriteFile(filepath.Join(profile, devToolsFile), []byte(strconv.Itoa(port)+"\n/devtools/browser/x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.OpenURL(t.Context(), "about:blank"); !errors.Is(err, ErrNoBrowser) || len(r.runs) != 0 {
		t.Fatalf("with a dead browser's endpoint file: %v, ran %q", err, r.runs)
	}
	// A lock naming a process that is not a browser (this test) is stale.
	lock := filepath.Join(profile, "SingletonLock")
	if err := os.Symlink("host-"+strconv.Itoa(os.Getpid()), lock); err != nil {
		t.Fatal(err)
	}
	if BrowserRunning(profile) {
		t.Fatal("a lock naming the test process reads as a running browser")
	}
}

func TestDisplayNumber(t *testing.T) {
	for in, want := range map[string]int{":99": 99, ":0": 0, ":99.0": 99} {
		if n, err := DisplayNumber(in); err != nil || n != want {
			t.Errorf("DisplayNumber(%q) = %d, %v", in, n, err)
		}
	}
	for _, in := range []string{"99", "host:99", ":", ":x", ":-1"} {
		if _, err := DisplayNumber(in); err == nil {
			t.Errorf("DisplayNumber(%q) accepted", in)
		}
	}
}

func TestParseSize(t *testing.T) {
	if w, h, err := parseSize("1280x800"); err != nil || w != 1280 || h != 800 {
		t.Fatalf("%d %d %v", w, h, err)
	}
	for _, s := range []string{"1280", "x800", "0x0", "1280x800x24", "99999x10"} {
		if _, _, err := parseSize(s); err == nil {
			t.Errorf("parseSize(%q) accepted", s)
		}
	}
}

// TestCall: the call command initializes, calls the tool and prints its
// result; a failed tool makes it fail after printing.
func TestCall(t *testing.T) {
	d, url := mcpServer(t)
	var out, errOut bytes.Buffer
	if err := Main(t.Context(), []string{"call", "--endpoint", url, "mouse_move", `{"x":7,"y":8}`}, nil, &out, &errOut, "v1"); err != nil {
		t.Fatalf("call: %v (%s)", err, errOut.String())
	}
	if strings.TrimSpace(out.String()) != `{"content":[{"type":"text","text":"moved to 7,8"}]}` {
		t.Fatalf("printed %q", out.String())
	}
	out.Reset()
	if err := Main(t.Context(), []string{"call", "--endpoint", url, "cursor_position"}, nil, &out, &errOut, "v1"); err != nil || !strings.Contains(out.String(), `"7,8"`) {
		t.Fatalf("cursor_position: %v %q", err, out.String())
	}
	out.Reset()
	d.fail = errors.New("boom")
	if err := Main(t.Context(), []string{"call", "--endpoint", url, "mouse_move", `{"x":1,"y":1}`}, nil, &out, &errOut, "v1"); !errors.Is(err, ErrToolFailed) || !strings.Contains(out.String(), "boom") {
		t.Fatalf("failing tool: %v %q", err, out.String())
	}
	var rpcErr *RPCError
	if err := Main(t.Context(), []string{"call", "--endpoint", url, "nope"}, nil, &out, &errOut, "v1"); !errors.As(err, &rpcErr) || rpcErr.Code != CodeInvalidParams {
		t.Fatalf("unknown tool: %v", err)
	}
	if err := Main(t.Context(), []string{"call", "--endpoint", url, "mouse_move", `[1,2]`}, nil, &out, &errOut, "v1"); err == nil {
		t.Fatal("arguments that are not an object were sent")
	}
}

// TestClientEventStream: the client reads a server that answers with an
// event stream and a session id, as other MCP servers do.
func TestClientEventStream(t *testing.T) {
	var sessions []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sessions = append(sessions, r.Header.Get("Mcp-Session-Id")+"|"+r.Header.Get("MCP-Protocol-Version"))
		var m Message
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		if m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Mcp-Session-Id", "s1")
		w.Header().Set("Content-Type", "text/event-stream")
		result := `{"protocolVersion":"2025-06-18"}`
		if m.Method == "tools/call" {
			result = `{"content":[{"type":"text","text":"ok"}]}`
		}
		// A notification first, then the response split over two data lines.
		w.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"))
		w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":" + string(m.ID) + ",\n"))
		w.Write([]byte("data: \"result\":" + result + "}\n\n"))
	}))
	defer ts.Close()
	c := &Client{Endpoint: ts.URL, Name: "t", Version: "1"}
	if err := c.Initialize(t.Context()); err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(t.Context(), "x", nil)
	if err != nil || !strings.Contains(string(res), `"ok"`) {
		t.Fatalf("%s %v", res, err)
	}
	want := []string{"|", "s1|2025-06-18", "s1|2025-06-18"}
	if !slices.Equal(sessions, want) {
		t.Fatalf("headers sent %q, want %q", sessions, want)
	}
}

// TestOpenURLWaitsForTheBrowser: open_url right after start waits for the
// browser serve started, and opens the URL once it answers; a browser that
// does not come within the call's bound is "the browser is not running".
func TestOpenURLWaitsForTheBrowser(t *testing.T) {
	profile := t.TempDir()
	up := make(chan struct{})
	d := &XDriver{Display: ":99", Runner: &fakeRunner{}, ProfileDir: profile, BrowserUp: up}
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // a call whose bound has passed
	if err := d.OpenURL(ctx, "about:blank"); !errors.Is(err, ErrNoBrowser) {
		t.Fatalf("the browser never came: %v, want %v", err, ErrNoBrowser)
	}

	// A DevTools endpoint that opens tabs, named in the profile only once
	// the browser is up.
	opened := make(chan string, 1)
	devtools := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPut && r.URL.Path == "/json/new":
			opened <- r.URL.RawQuery
			io.WriteString(w, `{"id":"tab-1"}`)
		case r.URL.Path == "/json/activate/tab-1":
			io.WriteString(w, "Target activated")
		default:
			http.NotFound(w, r)
		}
	}))
	defer devtools.Close()
	done := make(chan error, 1)
	go func() { done <- d.OpenURL(t.Context(), "http://example.test/") }()
	if err := os.WriteFile(filepath.Join(profile, devToolsFile), []byte(portOfURL(t, devtools.URL)+"\n/devtools/browser/x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	close(up)
	if err := <-done; err != nil {
		t.Fatalf("open_url once the browser is up: %v", err)
	}
	if got := <-opened; got != url.PathEscape("http://example.test/") {
		t.Fatalf("the browser was asked for %q", got)
	}
}

func portOfURL(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}
