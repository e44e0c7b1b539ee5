package agentconn_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
)

// envelope frames msg as one Connect streaming message.
func envelope(flags byte, msg []byte) []byte {
	b := make([]byte, 5, 5+len(msg))
	b[0] = flags
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

// TestForwardUnaryAndStream sends raw Connect requests through the
// Forwarder to a real agent: a unary call answers as the agent wrote it,
// and a server stream's messages arrive in order, ending with the
// end-of-stream message.
func TestForwardUnaryAndStream(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	hc := &http.Client{Transport: a.client.Forwarder()}

	req, _ := http.NewRequestWithContext(ctx, "POST", "http://ignored/paddock.agent.v1.AgentService/Health", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"pid"`) {
		t.Fatalf("unary: %d %s", resp.StatusCode, body)
	}

	content := bytes.Repeat([]byte("paddock "), 100_000)
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	msg, _ := json.Marshal(map[string]string{"path": path})
	req, _ = http.NewRequestWithContext(ctx, "POST", "http://ignored/paddock.agent.v1.FileService/Read", bytes.NewReader(envelope(0, msg)))
	req.Header.Set("Content-Type", "application/connect+json")
	resp, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, end := readStream(t, resp.Body)
	if !bytes.Equal(got, content) {
		t.Fatalf("stream: got %d bytes, want %d", len(got), len(content))
	}
	if end != "{}" {
		t.Fatalf("end of stream: %s", end)
	}
}

// readStream reads a FileService/Read answer's messages: the data they
// carry, and the end-of-stream message.
func readStream(t *testing.T, r io.Reader) (data []byte, end string) {
	t.Helper()
	for {
		var head [5]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			t.Fatalf("stream ended without its end message: %v", err)
		}
		msg := make([]byte, binary.BigEndian.Uint32(head[1:]))
		if _, err := io.ReadFull(r, msg); err != nil {
			t.Fatal(err)
		}
		if head[0]&2 != 0 {
			return data, string(msg)
		}
		var m struct{ Data string }
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatal(err)
		}
		b, _ := base64.StdEncoding.DecodeString(m.Data)
		data = append(data, b...)
	}
}

// TestForwardCanceled: a caller that goes away ends the call at the
// agent, even while its request's body still streams: the foreground
// process the call started is gone once the caller's context ends.
func TestForwardCanceled(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	msg, _ := json.Marshal(map[string]any{"start": map[string]any{"argv": []string{"sh", "-c", "echo started; exec sleep 600"}}})
	pr, pw := io.Pipe()
	defer pw.Close()
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://ignored/paddock.agent.v1.ProcessService/Exec", pr)
	req.Header.Set("Content-Type", "application/connect+json")
	go func() { _, _ = pw.Write(envelope(0, msg)) }()
	resp, err := (&http.Client{Transport: a.client.Forwarder()}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var head [5]byte
	if _, err := io.ReadFull(resp.Body, head[:]); err != nil {
		t.Fatalf("no first message: %v", err)
	}
	procs, err := a.client.Processes(ctxT(t))
	if err != nil || len(procs) != 1 || !procs[0].Running {
		t.Fatalf("before the cancel: %+v %v", procs, err)
	}
	cancel()
	waitGone(t, procs[0].PID)
}

// TestForwardUnreachable: an agent that cannot be dialed is
// agent_unavailable.
func TestForwardUnreachable(t *testing.T) {
	c := agentconn.New(func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", filepath.Join(t.TempDir(), "none.sock"))
	})
	defer c.Close()
	req, _ := http.NewRequestWithContext(ctxT(t), "GET", "http://ignored/health", nil)
	_, err := c.Forwarder().RoundTrip(req)
	wantCode(t, err, errdefs.ErrUnavailable, "agent_unavailable")
}
