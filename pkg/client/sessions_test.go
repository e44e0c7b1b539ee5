package client_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/pkg/client"
)

// streamServer answers every request with an NDJSON body, naming session
// s-1 in its header, and records the request's Accept header and body.
func streamServer(t *testing.T, body string) (*client.Client, *recorded, *string) {
	t.Helper()
	rec, accept := &recorded{}, new(string)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*rec = recorded{method: r.Method, uri: r.RequestURI, contentType: r.Header.Get("Content-Type"), body: string(b)}
		*accept = r.Header.Get("Accept")
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Header().Set(client.SessionIDHeader, "s-1")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "pdk_test")
	if err != nil {
		t.Fatal(err)
	}
	return c, rec, accept
}

// TestSessionEventStream reads canned NDJSON streams: a turn that ends, one
// that fails, and the ways a stream can break.
func TestSessionEventStream(t *testing.T) {
	const (
		user      = `{"seq":1,"turn":1,"time":"` + stamp + `","type":"message","role":"user","text":"hi"}` + "\n"
		assistant = `{"seq":2,"turn":1,"time":"` + stamp + `","type":"message","role":"assistant","text":"hello"}` + "\n"
		tool      = `{"seq":3,"turn":1,"time":"` + stamp + `","type":"tool_call","tool":{"id":"t1","name":"Bash","input":{"command":"ls"}}}` + "\n"
		failure   = `{"seq":4,"turn":1,"time":"` + stamp + `","type":"error","error":{"code":"harness_failed","message":"rate limited"}}` + "\n"
		done      = `{"seq":5,"turn":1,"time":"` + stamp + `","type":"done","done":{"exit_code":0,"harness_session_id":"h-9"}}` + "\n"
		doneFail  = `{"seq":5,"turn":1,"time":"` + stamp + `","type":"done","done":{"exit_code":1}}` + "\n"
	)
	tests := []struct {
		name       string
		body       string
		wantTypes  string
		wantFailed bool
		wantErrIs  error
		wantAnyErr bool
		wantCode   string
	}{
		{name: "a turn that ends", body: user + assistant + tool + done, wantTypes: "message message tool_call done"},
		{name: "a turn that fails", body: user + failure + doneFail, wantTypes: "message error done", wantFailed: true},
		{name: "an error then done with exit 0", body: user + failure + done, wantTypes: "message error done", wantFailed: true},
		{name: "cut off", body: user + assistant, wantTypes: "message message", wantErrIs: io.ErrUnexpectedEOF},
		{name: "broken after an error event", body: user + failure, wantTypes: "message error", wantErrIs: client.ErrUnavailable, wantCode: "harness_failed"},
		{name: "garbage", body: user + "{nope\n", wantTypes: "message", wantAnyErr: true},
		{name: "events after done", body: done + assistant, wantTypes: "done", wantAnyErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rec, accept := streamServer(t, tt.body)
			st, err := c.PromptStream(t.Context(), "acme", "dev", rtID, client.PromptRequest{Prompt: "hi", SessionID: "s-1"})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if *accept != "application/x-ndjson" || rec.uri != "/api/v1/org/acme/ws/dev/runtimes/"+rtID+"/prompt" || rec.body != `{"prompt":"hi","session_id":"s-1"}` {
				t.Fatalf("sent %+v, Accept %q", rec, *accept)
			}
			if st.SessionID != "s-1" {
				t.Fatalf("session %q", st.SessionID)
			}
			var types []string
			var end error
			for {
				ev, err := st.Next()
				if err != nil {
					end = err
					break
				}
				types = append(types, ev.Type)
			}
			switch {
			case tt.wantErrIs != nil:
				if !errors.Is(end, tt.wantErrIs) {
					t.Fatalf("err %v, want %v", end, tt.wantErrIs)
				}
			case tt.wantAnyErr:
				if end == nil || errors.Is(end, io.EOF) {
					t.Fatalf("err %v, want a read error", end)
				}
			case !errors.Is(end, io.EOF):
				t.Fatalf("err %v, want io.EOF", end)
			}
			if tt.wantCode != "" && !client.IsCode(end, tt.wantCode) {
				t.Fatalf("err %v, want code %s", end, tt.wantCode)
			}
			if got := strings.Join(types, " "); got != tt.wantTypes {
				t.Fatalf("events %q, want %q", got, tt.wantTypes)
			}
			if st.Failed() != tt.wantFailed {
				t.Fatalf("failed = %v", st.Failed())
			}
			if _, err := st.Next(); err == nil {
				t.Fatal("Next after the end returned an event")
			}
		})
	}
}

// TestSessionEventStreamDone keeps the done event's details and the tool
// call's input as sent.
func TestSessionEventStreamDone(t *testing.T) {
	c, rec, _ := streamServer(t, `{"seq":1,"turn":1,"time":"`+stamp+`","type":"tool_call","tool":{"id":"t1","name":"Bash","input":{"command":"ls"}}}`+"\n"+
		`{"seq":2,"turn":1,"time":"`+stamp+`","type":"done","done":{"exit_code":0,"harness_session_id":"h-9","result":"ok"}}`+"\n")
	st, err := c.TaskStream(t.Context(), "acme", "dev", rtID, client.PromptRequest{Prompt: "go"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if rec.uri != "/api/v1/org/acme/ws/dev/runtimes/"+rtID+"/task" {
		t.Fatalf("uri %s", rec.uri)
	}
	ev, err := st.Next()
	if err != nil || ev.Tool == nil || string(ev.Tool.Input) != `{"command":"ls"}` {
		t.Fatalf("tool call %+v %v", ev, err)
	}
	if _, ok := st.Done(); ok {
		t.Fatal("done before the done event")
	}
	if _, err := st.Next(); err != nil {
		t.Fatal(err)
	}
	d, ok := st.Done()
	if !ok || d.HarnessSessionID != "h-9" || d.Result != "ok" || st.Failed() {
		t.Fatalf("done %+v %v", d, ok)
	}
	if _, err := st.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after done: %v", err)
	}
}

// TestSessionStreamRefused: an answer refused before the stream begins is
// an *Error with the server's code.
func TestSessionStreamRefused(t *testing.T) {
	c, _ := canned(t, http.StatusUnprocessableEntity, `{"code":"harness_secret_missing","message":"set ANTHROPIC_API_KEY"}`)
	_, err := c.PromptStream(t.Context(), "acme", "dev", rtID, client.PromptRequest{Prompt: "hi"})
	if !client.IsCode(err, "harness_secret_missing") || !errors.Is(err, client.ErrFailedPrecondition) {
		t.Fatalf("err %v", err)
	}
}
