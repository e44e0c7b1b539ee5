package shim

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	fspb "github.com/paddockhq/paddock/internal/agentpb/envd/filesystem"
	"github.com/paddockhq/paddock/internal/agentpb/envd/filesystem/filesystemconnect"
	"github.com/paddockhq/paddock/internal/testenv"
)

// fsAgent is an agent serving envd in the test's process, with the
// sandbox's two users' homes in a directory of the test's.
type fsAgent struct {
	fs   filesystemconnect.FilesystemClient
	http *http.Client
	base string // holds home/user (user's) and root (root's)
	home string // user's home
	root string // root's home
}

// startFsAgent serves an agent whose default user is "user" (uid 1000), and
// returns envd clients of it: Connect with the JSON codec, as the SDKs
// call it, over HTTP/2 as the control plane forwards it. The agent
// switches users, so the test needs root.
func startFsAgent(t *testing.T) *fsAgent {
	t.Helper()
	return startFsAgentWith(t, Options{})
}

// startFsAgentWith is startFsAgent with opts (its default user set).
func startFsAgentWith(t *testing.T, opts Options) *fsAgent {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("envd's users need the agent to run as root")
	}
	base, err := os.MkdirTemp("", "envd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	a := &fsAgent{base: base, home: filepath.Join(base, "home", "user"), root: filepath.Join(base, "root")}
	must(t, os.Chmod(base, 0o755))
	must(t, os.MkdirAll(filepath.Dir(a.home), 0o755))
	must(t, os.Mkdir(a.home, 0o750))
	must(t, os.Chown(a.home, 1000, 1000))
	must(t, os.Mkdir(a.root, 0o700))
	saved := sandboxUsers
	sandboxUsers = map[string]sandboxUser{
		UserDefault: {name: UserDefault, uid: 1000, gid: 1000, home: a.home},
		UserRoot:    {name: UserRoot, uid: 0, gid: 0, home: a.root},
	}
	t.Cleanup(func() { sandboxUsers = saved })

	opts.User = UserDefault
	_, a.http, _ = serveAgent(t, opts, true)
	a.fs = filesystemconnect.NewFilesystemClient(a.http, "http://agent", connect.WithProtoJSON())
	return a
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// as returns a request for msg made as user (none: the default user).
func as[T any](user string, msg *T) *connect.Request[T] {
	req := connect.NewRequest(msg)
	if user != "" {
		req.Header().Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":")))
	}
	return req
}

// wantCode fails unless err is a Connect error with code.
func wantFsCode(t *testing.T, what string, err error, code connect.Code) {
	t.Helper()
	if connect.CodeOf(err) != code {
		t.Errorf("%s: error %v, want %s", what, err, code)
	}
}

// ownerOf returns the uid of what is at path.
func ownerOf(t *testing.T, path string) uint32 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Uid
}

func writeFile(t *testing.T, path, data string, mode os.FileMode, uid int) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(data), mode))
	must(t, os.Chmod(path, mode))
	must(t, os.Chown(path, uid, uid))
}

func TestEnvdFsStat(t *testing.T) {
	a := startFsAgent(t)
	ctx := context.Background()
	writeFile(t, filepath.Join(a.home, "notes.txt"), "hello", 0o640, 1000)
	must(t, os.Symlink(filepath.Join(a.home, "notes.txt"), filepath.Join(a.home, "link")))
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	must(t, os.Chtimes(filepath.Join(a.home, "notes.txt"), mtime, mtime))

	// Relative paths and ~ are the caller's home.
	for _, p := range []string{"notes.txt", "~/notes.txt", filepath.Join(a.home, "notes.txt"), a.home + "/x/../notes.txt"} {
		res, err := a.fs.Stat(ctx, as("", &fspb.StatRequest{Path: p}))
		if err != nil {
			t.Fatalf("stat %s: %v", p, err)
		}
		e := res.Msg.Entry
		if e.Name != "notes.txt" || e.Path != filepath.Join(a.home, "notes.txt") || e.Type != fspb.FileType_FILE_TYPE_FILE ||
			e.Size != 5 || e.Mode != 0o640 || e.Permissions != "-rw-r-----" || !e.ModifiedTime.AsTime().Equal(mtime) || e.SymlinkTarget != nil {
			t.Errorf("stat %s = %v", p, e)
		}
		names := newIDNames()
		if want := names.user(1000); e.Owner != want || e.Group != names.group(1000) {
			t.Errorf("stat %s: owner %q group %q, want %q", p, e.Owner, e.Group, want)
		}
	}
	res, err := a.fs.Stat(ctx, as("", &fspb.StatRequest{Path: "~"}))
	if err != nil || res.Msg.Entry.Path != a.home || res.Msg.Entry.Type != fspb.FileType_FILE_TYPE_DIRECTORY || res.Msg.Entry.Permissions != "drwxr-x---" {
		t.Errorf("stat ~ = %v, %v", res, err)
	}
	// A link has its target's type and mode, and names its target.
	res, err = a.fs.Stat(ctx, as("", &fspb.StatRequest{Path: "link"}))
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Msg.Entry; e.Type != fspb.FileType_FILE_TYPE_FILE || e.Mode != 0o640 || e.GetSymlinkTarget() != filepath.Join(a.home, "notes.txt") || !strings.HasPrefix(e.Permissions, "L") {
		t.Errorf("stat link = %v", e)
	}
	// Root's home is root's.
	res, err = a.fs.Stat(ctx, as("root", &fspb.StatRequest{Path: "~"}))
	if err != nil || res.Msg.Entry.Path != a.root || res.Msg.Entry.Owner != "root" {
		t.Errorf("stat ~ as root = %v, %v", res, err)
	}

	_, err = a.fs.Stat(ctx, as("", &fspb.StatRequest{Path: "missing"}))
	wantFsCode(t, "stat missing", err, connect.CodeNotFound)
	_, err = a.fs.Stat(ctx, as("", &fspb.StatRequest{Path: "~bob/x"}))
	wantFsCode(t, "stat ~bob", err, connect.CodeInvalidArgument)
	_, err = a.fs.Stat(ctx, as("bob", &fspb.StatRequest{Path: "/"}))
	wantFsCode(t, "stat as bob", err, connect.CodeUnauthenticated)
	// user may not look into root's home.
	_, err = a.fs.Stat(ctx, as("", &fspb.StatRequest{Path: filepath.Join(a.root, "x")}))
	wantFsCode(t, "stat in root's home", err, connect.CodePermissionDenied)
}

func TestEnvdFsListDir(t *testing.T) {
	a := startFsAgent(t)
	ctx := context.Background()
	for _, p := range []string{"a/b/c/deep.txt", "a/one.txt", "top.txt"} {
		writeFile(t, filepath.Join(a.home, "tree", p), p, 0o644, 1000)
	}
	must(t, os.Symlink(filepath.Join(a.home, "tree"), filepath.Join(a.home, "treelink")))

	list := func(path string, depth uint32) []string {
		t.Helper()
		res, err := a.fs.ListDir(ctx, as("", &fspb.ListDirRequest{Path: path, Depth: depth}))
		if err != nil {
			t.Fatalf("list %s depth %d: %v", path, depth, err)
		}
		var got []string
		for _, e := range res.Msg.Entries {
			kind := map[fspb.FileType]string{fspb.FileType_FILE_TYPE_FILE: "f", fspb.FileType_FILE_TYPE_DIRECTORY: "d"}[e.Type]
			got = append(got, kind+" "+e.Path)
			if e.Name != filepath.Base(e.Path) {
				t.Errorf("entry %s named %s", e.Path, e.Name)
			}
		}
		slices.Sort(got)
		return got
	}
	tree := filepath.Join(a.home, "tree")
	want1 := []string{"d " + tree + "/a", "f " + tree + "/top.txt"}
	if got := list("tree", 0); !slices.Equal(got, want1) {
		t.Errorf("depth 0 (1): %q, want %q", got, want1)
	}
	want2 := append(slices.Clone(want1), "d "+tree+"/a/b", "f "+tree+"/a/one.txt")
	slices.Sort(want2)
	if got := list("~/tree", 2); !slices.Equal(got, want2) {
		t.Errorf("depth 2: %q, want %q", got, want2)
	}
	if got := list(tree, 10); len(got) != 6 || !slices.Contains(got, "f "+tree+"/a/b/c/deep.txt") {
		t.Errorf("depth 10: %q", got)
	}
	// Through a link, the paths stay under the link.
	if got := list("treelink", 1); !slices.Equal(got, []string{"d " + a.home + "/treelink/a", "f " + a.home + "/treelink/top.txt"}) {
		t.Errorf("through a link: %q", got)
	}

	_, err := a.fs.ListDir(ctx, as("", &fspb.ListDirRequest{Path: "tree/top.txt"}))
	wantFsCode(t, "list a file", err, connect.CodeInvalidArgument)
	_, err = a.fs.ListDir(ctx, as("", &fspb.ListDirRequest{Path: "nope"}))
	wantFsCode(t, "list missing", err, connect.CodeNotFound)
	_, err = a.fs.ListDir(ctx, as("", &fspb.ListDirRequest{Path: a.root}))
	wantFsCode(t, "list root's home as user", err, connect.CodePermissionDenied)
	if _, err := a.fs.ListDir(ctx, as("root", &fspb.ListDirRequest{Path: a.root})); err != nil {
		t.Errorf("list root's home as root: %v", err)
	}
}

// TestEnvdFsListDirLarge lists a directory whose listing is larger than
// the agent's other messages may be.
func TestEnvdFsListDirLarge(t *testing.T) {
	a := startFsAgent(t)
	dir := filepath.Join(a.home, "many")
	must(t, os.Mkdir(dir, 0o755))
	const n = 30000
	for i := range n {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("a-rather-long-file-name-to-fill-the-listing-%06d.txt", i)))
		must(t, err)
		f.Close()
	}
	res, err := a.fs.ListDir(context.Background(), as("", &fspb.ListDirRequest{Path: dir}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Msg.Entries) != n {
		t.Errorf("listed %d entries, want %d", len(res.Msg.Entries), n)
	}
}

// TestEnvdFsListDirBounded: a listing whose entries pass maxListBytes
// stops and fails, at any depth.
func TestEnvdFsListDirBounded(t *testing.T) {
	a := startFsAgent(t)
	dir := filepath.Join(a.home, "deep")
	for i := range 50 {
		dir = filepath.Join(dir, fmt.Sprintf("level-%02d-%s", i, strings.Repeat("d", 40)))
	}
	must(t, os.MkdirAll(dir, 0o755))
	setVar(t, &maxListBytes, 16<<10)
	_, err := a.fs.ListDir(context.Background(), as("", &fspb.ListDirRequest{Path: "deep", Depth: 100}))
	wantFsCode(t, "a listing past the bound", err, connect.CodeResourceExhausted)
	if _, err := a.fs.ListDir(context.Background(), as("", &fspb.ListDirRequest{Path: "deep", Depth: 2})); err != nil {
		t.Errorf("a listing within the bound: %v", err)
	}
}

func TestEnvdFsMakeDirMoveRemove(t *testing.T) {
	a := startFsAgent(t)
	ctx := context.Background()

	res, err := a.fs.MakeDir(ctx, as("", &fspb.MakeDirRequest{Path: "x/y/z"}))
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Msg.Entry; e.Path != filepath.Join(a.home, "x/y/z") || e.Type != fspb.FileType_FILE_TYPE_DIRECTORY || e.Name != "z" {
		t.Errorf("make dir = %v", e)
	}
	for _, p := range []string{"x", "x/y", "x/y/z"} {
		if uid := ownerOf(t, filepath.Join(a.home, p)); uid != 1000 {
			t.Errorf("%s owned by %d, want user's", p, uid)
		}
	}
	_, err = a.fs.MakeDir(ctx, as("", &fspb.MakeDirRequest{Path: "x/y"}))
	wantFsCode(t, "make an existing dir", err, connect.CodeAlreadyExists)
	writeFile(t, filepath.Join(a.home, "f.txt"), "f", 0o644, 1000)
	_, err = a.fs.MakeDir(ctx, as("", &fspb.MakeDirRequest{Path: "f.txt"}))
	wantFsCode(t, "make dir over a file", err, connect.CodeInvalidArgument)
	_, err = a.fs.MakeDir(ctx, as("", &fspb.MakeDirRequest{Path: filepath.Join(a.root, "d")}))
	wantFsCode(t, "make dir in root's home", err, connect.CodePermissionDenied)
	if _, err := a.fs.MakeDir(ctx, as("root", &fspb.MakeDirRequest{Path: "~/d"})); err != nil {
		t.Fatal(err)
	}
	if uid := ownerOf(t, filepath.Join(a.root, "d")); uid != 0 {
		t.Errorf("root's dir owned by %d", uid)
	}

	// Move creates the destination's parents and answers its entry.
	mv, err := a.fs.Move(ctx, as("", &fspb.MoveRequest{Source: "f.txt", Destination: "new/place/g.txt"}))
	if err != nil {
		t.Fatal(err)
	}
	if e := mv.Msg.Entry; e.Path != filepath.Join(a.home, "new/place/g.txt") || e.Size != 1 || e.Type != fspb.FileType_FILE_TYPE_FILE {
		t.Errorf("move = %v", e)
	}
	if _, err := os.Stat(filepath.Join(a.home, "f.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("source still there: %v", err)
	}
	_, err = a.fs.Move(ctx, as("", &fspb.MoveRequest{Source: "gone.txt", Destination: "z/gone.txt"}))
	wantFsCode(t, "move missing", err, connect.CodeNotFound)
	if _, err := os.Stat(filepath.Join(a.home, "z")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed move created the destination's parent: %v", err)
	}

	// Remove removes trees; a missing path is no error, as in envd.
	if _, err := a.fs.Remove(ctx, as("", &fspb.RemoveRequest{Path: "x"})); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(a.home, "x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("x still there: %v", err)
	}
	if _, err := a.fs.Remove(ctx, as("", &fspb.RemoveRequest{Path: "x"})); err != nil {
		t.Errorf("remove missing: %v", err)
	}
	_, err = a.fs.Remove(ctx, as("", &fspb.RemoveRequest{Path: filepath.Join(a.root, "d")}))
	wantFsCode(t, "remove root's dir as user", err, connect.CodePermissionDenied)
	_, err = a.fs.Remove(ctx, as("root", &fspb.RemoveRequest{Path: "/"}))
	wantFsCode(t, "remove /", err, connect.CodeInvalidArgument)
}

// collectEvents reads stream until every event of want ("<type> <name>")
// has come, and returns what came.
func collectEvents(t *testing.T, next func() (*fspb.FilesystemEvent, error), want ...string) []*fspb.FilesystemEvent {
	t.Helper()
	missing := map[string]bool{}
	for _, w := range want {
		missing[w] = true
	}
	var got []*fspb.FilesystemEvent
	for len(missing) > 0 {
		ev, err := next()
		if err != nil {
			t.Fatalf("waiting for %v: %v (got %v)", missing, err, got)
		}
		got = append(got, ev)
		delete(missing, eventKey(ev))
	}
	return got
}

func eventKey(ev *fspb.FilesystemEvent) string {
	return strings.TrimPrefix(ev.Type.String(), "EVENT_TYPE_") + " " + ev.Name
}

// watchStream starts WatchDir and returns its next filesystem event.
func watchStream(t *testing.T, a *fsAgent, req *connect.Request[fspb.WatchDirRequest]) (func() (*fspb.FilesystemEvent, error), *connect.ServerStreamForClient[fspb.WatchDirResponse]) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := a.fs.WatchDir(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if !st.Receive() || st.Msg().GetStart() == nil {
		t.Fatalf("first message %v, %v: want a start event", st.Msg(), st.Err())
	}
	return func() (*fspb.FilesystemEvent, error) {
		for st.Receive() {
			if ev := st.Msg().GetFilesystem(); ev != nil {
				return ev, nil
			}
		}
		return nil, fmt.Errorf("stream ended: %w", st.Err())
	}, st
}

func TestEnvdFsWatchDir(t *testing.T) {
	a := startFsAgent(t)
	dir := filepath.Join(a.home, "w")
	must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	must(t, os.Chown(dir, 1000, 1000))
	next, _ := watchStream(t, a, as("", &fspb.WatchDirRequest{Path: "w", Recursive: true, IncludeEntry: true}))

	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("1"), 0o644))
	got := collectEvents(t, next, "CREATE a.txt", "WRITE a.txt")
	for _, ev := range got {
		if ev.Name == "a.txt" && (ev.Entry == nil || ev.Entry.Path != filepath.Join(dir, "a.txt")) {
			t.Errorf("event %v lacks its entry", ev)
		}
	}
	must(t, os.Chmod(filepath.Join(dir, "a.txt"), 0o600))
	collectEvents(t, next, "CHMOD a.txt")
	must(t, os.Rename(filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")))
	collectEvents(t, next, "RENAME a.txt", "CREATE b.txt")
	must(t, os.Remove(filepath.Join(dir, "b.txt")))
	collectEvents(t, next, "REMOVE b.txt")
	// An upload is created and written in place, as the SDKs' watchers expect.
	res, err := a.http.Post("http://agent/files?path=w/up.txt", "application/octet-stream", strings.NewReader("up"))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("upload: %v %v", res, err)
	}
	res.Body.Close()
	collectEvents(t, next, "CREATE up.txt", "WRITE up.txt")

	// Recursive: an existing subdirectory, and one made since.
	must(t, os.WriteFile(filepath.Join(dir, "sub", "s.txt"), nil, 0o644))
	collectEvents(t, next, "CREATE sub/s.txt")
	must(t, os.Mkdir(filepath.Join(dir, "later"), 0o755))
	collectEvents(t, next, "CREATE later")
	testWatchedSoon(t, filepath.Join(dir, "later"), next, "later")
}

// testWatchedSoon writes files in dir until one's event comes: a
// directory made under a recursive watch is watched once its create event
// has been handled, which the test cannot see otherwise.
func testWatchedSoon(t *testing.T, dir string, next func() (*fspb.FilesystemEvent, error), rel string) {
	t.Helper()
	for i := 0; ; i++ {
		name := fmt.Sprintf("f%d", i)
		must(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
		ev, err := next()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(ev.Name, rel+"/") && ev.Type == fspb.EventType_EVENT_TYPE_CREATE {
			return
		}
		if i > 1000 {
			t.Fatalf("no event from %s", dir)
		}
	}
}

func TestEnvdFsWatchDirNotRecursive(t *testing.T) {
	a := startFsAgent(t)
	dir := filepath.Join(a.home, "w")
	must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	req := as("", &fspb.WatchDirRequest{Path: dir})
	req.Header().Set("Keepalive-Ping-Interval", "1")
	_, st := watchStream(t, a, req)
	must(t, os.WriteFile(filepath.Join(dir, "sub", "hidden.txt"), nil, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "seen.txt"), nil, 0o644))
	var names []string
	keepalive := false
	for st.Receive() {
		if ev := st.Msg().GetFilesystem(); ev != nil {
			names = append(names, ev.Name)
		}
		if st.Msg().GetKeepalive() != nil {
			keepalive = true
		}
		if keepalive && slices.Contains(names, "seen.txt") {
			break
		}
	}
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "sub/") }) {
		t.Errorf("a watch that is not recursive saw %q", names)
	}
	if !keepalive {
		t.Errorf("stream ended without a keepalive: %v", st.Err())
	}

	ctx := context.Background()
	for _, tt := range []struct {
		path string
		code connect.Code
	}{
		{"nope", connect.CodeNotFound},
		{"w/sub/hidden.txt", connect.CodeInvalidArgument},
	} {
		s, err := a.fs.WatchDir(ctx, as("", &fspb.WatchDirRequest{Path: tt.path}))
		if err == nil {
			for s.Receive() {
			}
			err = s.Err()
			s.Close()
		}
		wantFsCode(t, "watch "+tt.path, err, tt.code)
	}
}

func TestEnvdFsWatchers(t *testing.T) {
	a := startFsAgent(t)
	ctx := context.Background()
	dir := filepath.Join(a.home, "p")
	must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	res, err := a.fs.CreateWatcher(ctx, as("", &fspb.CreateWatcherRequest{Path: "p", Recursive: true}))
	if err != nil {
		t.Fatal(err)
	}
	id := res.Msg.WatcherId
	var pending []*fspb.FilesystemEvent
	next := func() (*fspb.FilesystemEvent, error) {
		err := testenv.Poll(time.Minute, func() error {
			if len(pending) > 0 {
				return nil
			}
			r, err := a.fs.GetWatcherEvents(ctx, as("", &fspb.GetWatcherEventsRequest{WatcherId: id}))
			if err != nil {
				return err
			}
			if pending = r.Msg.Events; len(pending) == 0 {
				return errors.New("no events yet")
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		ev := pending[0]
		pending = pending[1:]
		return ev, nil
	}
	must(t, os.WriteFile(filepath.Join(dir, "sub", "x"), []byte("x"), 0o644))
	collectEvents(t, next, "CREATE sub/x", "WRITE sub/x")
	must(t, os.Remove(filepath.Join(dir, "sub", "x")))
	collectEvents(t, next, "REMOVE sub/x")
	// Fetched events are gone.
	r, err := a.fs.GetWatcherEvents(ctx, as("", &fspb.GetWatcherEventsRequest{WatcherId: id}))
	if err != nil || len(r.Msg.Events)+len(pending) != 0 {
		t.Errorf("events fetched twice: %v %v, %v", r, pending, err)
	}
	if _, err := a.fs.RemoveWatcher(ctx, as("", &fspb.RemoveWatcherRequest{WatcherId: id})); err != nil {
		t.Fatal(err)
	}
	_, err = a.fs.GetWatcherEvents(ctx, as("", &fspb.GetWatcherEventsRequest{WatcherId: id}))
	wantFsCode(t, "events of a removed watcher", err, connect.CodeNotFound)
	_, err = a.fs.RemoveWatcher(ctx, as("", &fspb.RemoveWatcherRequest{WatcherId: id}))
	wantFsCode(t, "remove a removed watcher", err, connect.CodeNotFound)
	_, err = a.fs.CreateWatcher(ctx, as("", &fspb.CreateWatcherRequest{Path: a.root}))
	wantFsCode(t, "watch root's home as user", err, connect.CodePermissionDenied)

	// Events not fetched are bounded: past the bound the watcher fails.
	saved := maxPolledEvents
	maxPolledEvents = 2
	res, err = a.fs.CreateWatcher(ctx, as("", &fspb.CreateWatcherRequest{Path: "p"}))
	maxPolledEvents = saved
	if err != nil {
		t.Fatal(err)
	}
	// Each fetch takes what has arrived, so a fetch racing the events of
	// one batch may leave fewer than the bound behind: the next batch is
	// written only after a fetch, and lands whole before the next one.
	n := 0
	err = testenv.Poll(time.Minute, func() error {
		_, err := a.fs.GetWatcherEvents(ctx, as("", &fspb.GetWatcherEventsRequest{WatcherId: res.Msg.WatcherId}))
		if connect.CodeOf(err) == connect.CodeResourceExhausted {
			return nil
		}
		for range 3 {
			must(t, os.WriteFile(filepath.Join(dir, fmt.Sprint(n)), nil, 0o644))
			n++
		}
		return fmt.Errorf("events: %v, want resource_exhausted", err)
	})
	if err != nil {
		t.Error(err)
	}
	// That watcher, left behind, ends with the agent.
}

// setVar sets *v to val for the test.
func setVar[T any](t *testing.T, v *T, val T) {
	saved := *v
	*v = val
	t.Cleanup(func() { *v = saved })
}

// TestEnvdFsWatcherBounds: a polled watcher fails once the events it keeps
// pass maxPolledBytes, and an agent keeps at most maxPolledWatchers.
func TestEnvdFsWatcherBounds(t *testing.T) {
	a := startFsAgent(t)
	ctx := context.Background()
	dir := filepath.Join(a.home, "b")
	must(t, os.Mkdir(dir, 0o755))
	must(t, os.Chown(dir, 1000, 1000))
	setVar(t, &maxPolledBytes, 1<<10)
	setVar(t, &maxPolledWatchers, 2)
	res, err := a.fs.CreateWatcher(ctx, as("", &fspb.CreateWatcherRequest{Path: "b"}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d-%s", i, strings.Repeat("n", 200))), nil, 0o644))
	}
	err = testenv.Poll(time.Minute, func() error {
		_, err := a.fs.GetWatcherEvents(ctx, as("", &fspb.GetWatcherEventsRequest{WatcherId: res.Msg.WatcherId}))
		if connect.CodeOf(err) != connect.CodeResourceExhausted {
			return fmt.Errorf("events: %v, want resource_exhausted", err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}

	second, err := a.fs.CreateWatcher(ctx, as("", &fspb.CreateWatcherRequest{Path: "b"}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.fs.CreateWatcher(ctx, as("", &fspb.CreateWatcherRequest{Path: "b"}))
	wantFsCode(t, "a third watcher", err, connect.CodeResourceExhausted)
	if _, err := a.fs.RemoveWatcher(ctx, as("", &fspb.RemoveWatcherRequest{WatcherId: second.Msg.WatcherId})); err != nil {
		t.Fatal(err)
	}
	if _, err := a.fs.CreateWatcher(ctx, as("", &fspb.CreateWatcherRequest{Path: "b"})); err != nil {
		t.Fatalf("a watcher after one was removed: %v", err)
	}
}

// TestEnvdFsWatcherExpires: a polled watcher nobody polls for
// polledWatchIdle is removed; each poll starts its idle time again.
func TestEnvdFsWatcherExpires(t *testing.T) {
	clock := newFakeClock()
	a := startFsAgentWith(t, Options{Clock: clock})
	ctx := context.Background()
	res, err := a.fs.CreateWatcher(ctx, as("", &fspb.CreateWatcherRequest{Path: "."}))
	if err != nil {
		t.Fatal(err)
	}
	poll := func() error {
		_, err := a.fs.GetWatcherEvents(ctx, as("", &fspb.GetWatcherEventsRequest{WatcherId: res.Msg.WatcherId}))
		return err
	}
	for range 3 {
		clock.advance(polledWatchIdle - time.Second)
		if err := poll(); err != nil {
			t.Fatalf("a watcher polled in time: %v", err)
		}
	}
	clock.advance(polledWatchIdle)
	wantFsCode(t, "a watcher nobody polled", poll(), connect.CodeNotFound)
}

// fakeClock is a Clock whose time moves only when the test advances it;
// timers due then run, in the test's goroutine.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c    *fakeClock
	at   time.Time
	f    func()
	done bool // fired or stopped
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	pending := !t.done
	t.done = true
	return pending
}

// advance moves the time on by d and runs the timers due.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	for _, t := range c.timers {
		if !t.done && !t.at.After(c.now) {
			t.done = true
			due = append(due, t)
		}
	}
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

// TestEnvdFsWatchLimits: the kernel's inotify limits are resource
// exhaustion, not a full disk or an internal error.
func TestEnvdFsWatchLimits(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENOSPC} {
		var re *rpcError
		if err := watchError("/w", errno); !errors.As(err, &re) || re.kind != kindResourceExhausted || re.reason != "too_many_watches" {
			t.Errorf("%v: %v", errno, err)
		}
	}
	var re *rpcError
	if err := watchError("/w", syscall.ENOENT); !errors.As(err, &re) || re.kind != kindNotFound {
		t.Errorf("ENOENT: %v", err)
	}
}
