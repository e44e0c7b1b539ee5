package shim

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestWriteBytesProtocol plays the byte path's edges on the wire: a
// request that is no upgrade, a first frame that is no header, a frame
// over the bound, uploads that end before their end frame (mid-frame and
// between frames), and one the server's stop ends. None leaves a file.
func TestWriteBytesProtocol(t *testing.T) {
	_, c, stop := serveAgent(t, Options{}, false)
	dir := t.TempDir()
	target := filepath.Join(dir, "f")

	open := func(t *testing.T) (net.Conn, *bufio.Reader) {
		conn, br, _ := upgraded(t, c, agentpb.WriteBytesPath, agentpb.WriteBytesUpgrade)
		return conn, br
	}
	header := func(t *testing.T, conn net.Conn) {
		t.Helper()
		b, err := proto.Marshal(&agentpb.WriteHeader{Path: target})
		if err != nil {
			t.Fatal(err)
		}
		if err := agentpb.WriteFrame(conn, b); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(t *testing.T, br *bufio.Reader, code connect.Code, reason string) {
		t.Helper()
		b, err := agentpb.ReadFrame(br, agentpb.WriteBytesFrameMax)
		if err != nil {
			t.Fatal(err)
		}
		var e agentpb.FrameError
		if len(b) == 0 || b[0] != agentpb.WriteBytesFailed || json.Unmarshal(b[1:], &e) != nil {
			t.Fatalf("answer %q, want a refusal", b)
		}
		if connect.Code(e.Code) != code || e.Reason != reason {
			t.Fatalf("refused with %v %q (%s), want %v %q", connect.Code(e.Code), e.Reason, e.Message, code, reason)
		}
	}
	nothingLeft := func() error {
		es, err := os.ReadDir(dir)
		if err != nil || len(es) != 0 {
			return fmt.Errorf("left in %s: %v %v", dir, es, err)
		}
		return nil
	}

	t.Run("not an upgrade", func(t *testing.T) {
		res, err := c.Post("http://agent"+agentpb.WriteBytesPath, "application/octet-stream", strings.NewReader("data"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUpgradeRequired || res.Header.Get("Upgrade") != agentpb.WriteBytesUpgrade {
			t.Fatalf("%s, Upgrade %q", res.Status, res.Header.Get("Upgrade"))
		}
	})
	t.Run("not a header", func(t *testing.T) {
		conn, br := open(t)
		if err := agentpb.WriteFrame(conn, []byte{0xff, 0xff, 0xff}); err != nil {
			t.Fatal(err)
		}
		refused(t, br, connect.CodeInvalidArgument, "invalid_header")
	})
	t.Run("frame too large", func(t *testing.T) {
		conn, br := open(t)
		header(t, conn)
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], agentpb.WriteBytesFrameMax+1)
		if _, err := conn.Write(n[:]); err != nil {
			t.Fatal(err)
		}
		refused(t, br, connect.CodeInvalidArgument, "frame_too_large")
		testenv.Eventually(t, nothingLeft)
	})
	for _, tt := range []struct {
		name string
		send func(conn net.Conn) error
	}{
		{"ended mid-frame", func(conn net.Conn) error {
			var n [4]byte
			binary.BigEndian.PutUint32(n[:], 1<<20)
			_, err := conn.Write(append(n[:], make([]byte, 1000)...))
			return err
		}},
		{"ended between frames", func(conn net.Conn) error { return agentpb.WriteFrame(conn, make([]byte, 1<<20)) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, br := open(t)
			header(t, conn)
			if err := tt.send(conn); err != nil {
				t.Fatal(err)
			}
			conn.(*net.UnixConn).CloseWrite()
			// Nobody is answered, and the partial file goes.
			if _, err := agentpb.ReadFrame(br, agentpb.WriteBytesFrameMax); !errors.Is(err, io.EOF) {
				t.Fatalf("got %v, want the connection closed unanswered", err)
			}
			testenv.Eventually(t, nothingLeft)
		})
	}
	t.Run("ended by the server's stop", func(t *testing.T) {
		conn, br := open(t)
		header(t, conn)
		if err := agentpb.WriteFrame(conn, make([]byte, 4096)); err != nil {
			t.Fatal(err)
		}
		// The agent has made its temporary file once the data is in it.
		testenv.Eventually(t, func() error {
			if es, _ := os.ReadDir(dir); len(es) != 1 {
				return fmt.Errorf("no temporary file yet: %v", es)
			}
			return nil
		})
		stop()
		if _, err := agentpb.ReadFrame(br, agentpb.WriteBytesFrameMax); err == nil {
			t.Fatal("a write the server's stop cut off was answered")
		}
		testenv.Eventually(t, nothingLeft)
	})
}
