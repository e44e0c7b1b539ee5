package client_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/pkg/client"
)

// TestExecStream reads canned NDJSON streams: events in order, the end of
// a replay, and the ways a stream can break.
func TestExecStream(t *testing.T) {
	const started = `{"event":"started","id":"p-1","pid":42}` + "\n"
	tests := []struct {
		name      string
		body      string
		noFollow  bool
		wantOut   string
		wantErr   string
		wantCode  int
		wantErrIs error
	}{
		{
			name:     "output then exit",
			body:     started + `{"event":"output","stream":"stdout","data":"aGkK"}` + "\n" + `{"event":"output","stream":"stderr","offset":0,"data":"ZXJyCg=="}` + "\n" + `{"event":"exit","exit":{"code":3}}` + "\n",
			wantOut:  "hi\n",
			wantErr:  "err\n",
			wantCode: 3,
		},
		{
			name:      "replay of a running process",
			body:      started + `{"event":"output","stream":"stdout","data":"aGkK"}` + "\n",
			noFollow:  true,
			wantOut:   "hi\n",
			wantErrIs: client.ErrNotExited,
		},
		{
			name:      "cut off",
			body:      started + `{"event":"output","stream":"stdout","data":"aGkK"}` + "\n",
			wantOut:   "hi\n",
			wantErrIs: io.ErrUnexpectedEOF,
		},
		{
			name:      "error event",
			body:      started + `{"event":"error","error":{"code":"agent_unavailable","message":"gone"}}` + "\n",
			wantErrIs: client.ErrUnavailable,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rec := canned(t, http.StatusOK, tt.body)
			var (
				st  *client.ExecStream
				err error
			)
			if tt.noFollow {
				st, err = c.Attach(t.Context(), "acme", "dev", rtID, "p-1", client.AttachOptions{StdoutOffset: 5, NoFollow: true})
			} else {
				st, err = c.ExecStream(t.Context(), "acme", "dev", rtID, client.ExecRequest{Argv: []string{"x"}})
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.ID != "p-1" || st.PID != 42 {
				t.Fatalf("started %q %d", st.ID, st.PID)
			}
			var stdout, stderr bytes.Buffer
			exit, err := st.Wait(&stdout, &stderr)
			if stdout.String() != tt.wantOut || stderr.String() != tt.wantErr {
				t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
			}
			if tt.wantErrIs != nil {
				if !errors.Is(err, tt.wantErrIs) {
					t.Fatalf("err %v, want %v", err, tt.wantErrIs)
				}
				return
			}
			if err != nil || exit.Code != tt.wantCode {
				t.Fatalf("exit %+v %v", exit, err)
			}
			if tt.noFollow && rec.uri != "/api/v1/org/acme/ws/dev/runtimes/"+rtID+"/processes/p-1/attach?follow=false&stdout_offset=5" {
				t.Fatalf("uri %s", rec.uri)
			}
		})
	}
}

func TestExecStreamRefused(t *testing.T) {
	c, _ := canned(t, http.StatusNotFound, `{"code":"command_not_found","message":"x: not found"}`)
	_, err := c.ExecStream(t.Context(), "acme", "dev", rtID, client.ExecRequest{Argv: []string{"x"}})
	if !client.IsCode(err, "command_not_found") || !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("err %v", err)
	}
}

func TestFileRequests(t *testing.T) {
	c, rec := canned(t, http.StatusOK, `{"path":"/w/a b","type":"file","size":3,"mode":420}`)
	fi, err := c.WriteFile(t.Context(), "acme", "dev", rtID, "/w/a b", strings.NewReader("abc"), client.WriteFileOptions{Mode: 0o640, NoOverwrite: true})
	if err != nil || fi.Size != 3 || fi.IsDir() {
		t.Fatalf("write %+v %v", fi, err)
	}
	want := "/api/v1/org/acme/ws/dev/runtimes/" + rtID + "/files?mode=640&no_overwrite=true&path=%2Fw%2Fa+b"
	if rec.method != "PUT" || rec.uri != want || rec.contentType != "application/octet-stream" || rec.body != "abc" {
		t.Fatalf("sent %+v, want PUT %s", rec, want)
	}
}
