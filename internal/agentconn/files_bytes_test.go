package agentconn_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/testenv"
)

// oneMessage is the most a write sends by FileService.Write when the
// agent has the byte path: the client's chunk size.
const oneMessage = 256 << 10

// counted is dial, counting the connections in n.
func counted(n *atomic.Int32, dial func(context.Context) (net.Conn, error)) func(context.Context) (net.Conn, error) {
	return func(ctx context.Context) (net.Conn, error) {
		n.Add(1)
		return dial(ctx)
	}
}

// countingDial dials the unix socket at sock, counting the connections.
func countingDial(n *atomic.Int32, sock string) func(context.Context) (net.Conn, error) {
	return counted(n, testenv.UnixDialer(sock))
}

// byteDials holds, for each client newClient made, how many connections
// its byte-path writes dialed.
var byteDials sync.Map // *agentconn.Client → *atomic.Int32

// newClient is agentconn.New(dial) whose byte-path connections are
// counted in byteDials.
func newClient(dial func(context.Context) (net.Conn, error)) *agentconn.Client {
	n := new(atomic.Int32)
	c := agentconn.New(dial, agentconn.WithBytesDial(counted(n, dial)))
	byteDials.Store(c, n)
	return c
}

// bytePathDials is how many byte-path connections c (from newClient) dialed.
func bytePathDials(t *testing.T, c *agentconn.Client) int32 {
	t.Helper()
	n, ok := byteDials.Load(c)
	if !ok {
		t.Fatal("the client was not made by newClient")
	}
	return n.(*atomic.Int32).Load()
}

// patterned returns n bytes that differ from offset to offset.
func patterned(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>10)
	}
	return b
}

// TestWriteBytes: a write larger than one message goes by the agent's byte
// path, on a connection of its own dialed with WithBytesDial's function,
// and lands whole with its mode; one of a message or less goes by Write on
// the shared connection; and the byte path refuses what Write refuses,
// with the same codes, leaving nothing behind.
func TestWriteBytes(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	var shared, own atomic.Int32
	c := agentconn.New(countingDial(&shared, a.socket), agentconn.WithBytesDial(countingDial(&own, a.socket)))
	defer c.Close()
	dir := t.TempDir()

	write := func(name string, data []byte, opts agentconn.WriteOptions) (agentconn.FileInfo, error) {
		t.Helper()
		return c.WriteFileWith(ctx, filepath.Join(dir, name), bytes.NewReader(data), opts)
	}
	check := func(name string, want []byte, mode os.FileMode) {
		t.Helper()
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s holds %d bytes that differ from the %d written", name, len(got), len(want))
		}
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Fatalf("%s has mode %v, want %v", name, fi.Mode().Perm(), mode)
		}
	}
	paths := func(wantOwn int32) {
		t.Helper()
		if got := own.Load(); got != wantOwn {
			t.Fatalf("%d byte-path connections, want %d", got, wantOwn)
		}
	}

	big := patterned(3<<20 + 17) // three whole frames and a piece
	info, err := write("big", big, agentconn.WriteOptions{Mode: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != int64(len(big)) || info.Mode.Perm() != 0o600 {
		t.Fatalf("info %+v", info)
	}
	check("big", big, 0o600)
	paths(1)

	for _, n := range []int{0, 1000, oneMessage} {
		if _, err := write("small", patterned(n), agentconn.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		check("small", patterned(n), 0o644)
	}
	paths(1)
	if _, err := write("edge", patterned(oneMessage+1), agentconn.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	check("edge", patterned(oneMessage+1), 0o644)
	paths(2)
	if got := shared.Load(); got != 1 {
		t.Fatalf("%d shared connections, want 1", got)
	}

	// The byte path's refusals are Write's.
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = write("big", big, agentconn.WriteOptions{NoOverwrite: true})
	wantCode(t, err, errdefs.ErrConflict, "file_exists")
	_, err = write("sub", big, agentconn.WriteOptions{})
	wantCode(t, err, errdefs.ErrFailedPrecondition, "is_a_directory")
	_, err = write("nope/f", big, agentconn.WriteOptions{})
	wantCode(t, err, errdefs.ErrNotFound, "file_not_found")
	_, err = c.WriteFileWith(ctx, "relative", bytes.NewReader(big), agentconn.WriteOptions{})
	wantCode(t, err, errdefs.ErrInvalidArgument, "invalid_path")
	paths(6)
	check("big", big, 0o600)
	assertNoTemp(t, dir)

	// NoOverwrite onto a new name is a write like any other.
	if _, err := write("new", big, agentconn.WriteOptions{NoOverwrite: true, Mode: 0o640}); err != nil {
		t.Fatal(err)
	}
	check("new", big, 0o640)
}

// TestWriteBytesAsUser: the byte path writes as the agent's file user,
// as Write does: the file is the user's, and a directory only root may
// write into refuses it.
func TestWriteBytesAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("writing as another user needs the agent to be root, as it is in a sandbox")
	}
	a := startAgent(t, shim.Options{User: "user"})
	ctx := ctxT(t)
	// Under /tmp itself: the user must reach it.
	dir, err := os.MkdirTemp("", "pdk-bytes-user")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{10, 2 << 20} {
		path := filepath.Join(dir, "f")
		if _, err := a.client.WriteFile(ctx, path, bytes.NewReader(patterned(n)), 0); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 1000 || st.Gid != 1000 {
			t.Fatalf("a write of %d bytes is owned by %d:%d, want 1000:1000", n, st.Uid, st.Gid)
		}
		rootOnly := filepath.Join(dir, "root-only")
		if err := os.MkdirAll(rootOnly, 0o755); err != nil {
			t.Fatal(err)
		}
		_, err = a.client.WriteFile(ctx, filepath.Join(rootOnly, "f"), bytes.NewReader(patterned(n)), 0)
		wantCode(t, err, errdefs.ErrPermissionDenied, "permission_denied")
	}
}

// TestWriteBytesOldAgent: an agent without the byte path (one started
// before it existed) answers its upgrade with 404, and the client writes
// by FileService.Write instead, with the bytes it had read already.
func TestWriteBytesOldAgent(t *testing.T) {
	var asked atomic.Int32
	sock := serveOldAgent(t, agentpb.WriteBytesPath, func(path string) {
		if path == agentpb.WriteBytesPath {
			asked.Add(1)
		}
	})
	c := agentconn.New(testenv.UnixDialer(sock))
	defer c.Close()
	path := filepath.Join(t.TempDir(), "f")
	data := patterned(2<<20 + 3)
	if _, err := c.WriteFile(ctxT(t), path, bytes.NewReader(data), 0); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, len(data))
	}
	if asked.Load() != 1 {
		t.Fatalf("the byte path was asked for %d times, want 1", asked.Load())
	}
}
