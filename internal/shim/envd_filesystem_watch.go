package shim

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	fspb "github.com/paddockhq/paddock/internal/agentpb/envd/filesystem"
)

// watchMask is what a watch asks inotify for: the changes envd reports.
const watchMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_DELETE | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// Bounds of polled watchers (variables for tests): one keeps at most
// maxPolledEvents events and maxPolledBytes of them (encoded) between
// polls, past either of which it fails, as an overflowing inotify queue
// does; an agent keeps at most maxPolledWatchers, and removes one nobody
// polled for polledWatchIdle.
var (
	maxPolledEvents   = 100000
	maxPolledBytes    = 16 << 20
	maxPolledWatchers = 64
	polledWatchIdle   = 5 * time.Minute
)

// errWatchOverflow: more events came than a watch could keep.
var errWatchOverflow = &rpcError{kind: kindResourceExhausted, reason: "watch_overflow", msg: "too many file system events: some were lost"}

// dirWatch watches a directory (and, if recursive, every directory below
// it, those created later too) with inotify. One goroutine reads it.
type dirWatch struct {
	f         *os.File // the inotify instance; closing it ends next
	root      string
	recursive bool
	user      sandboxUser      // whose permissions watches are added with
	dirs      map[int32]string // watch descriptor → directory
	buf       []byte
}

// watchEvent is one change, at path.
type watchEvent struct {
	path string
	typ  fspb.EventType
}

// startWatch starts watching the directory at path as u.
func startWatch(u sandboxUser, path string, recursive, allowNetwork bool) (*dirWatch, error) {
	return asCaller(u, func() (*dirWatch, error) {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fsError("watch", path, err)
		}
		if !fi.IsDir() {
			return nil, errInvalid("not_a_directory", "path is not a directory: %s", path)
		}
		if !allowNetwork && onNetworkMount(path) {
			return nil, errInvalid("network_mount", "cannot watch %s: it is on a network file system (allow network mounts to try)", path)
		}
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
		if err != nil {
			return nil, watchError(path, err)
		}
		w := &dirWatch{f: os.NewFile(uintptr(fd), "inotify"), root: path, recursive: recursive,
			user: u, dirs: map[int32]string{}, buf: make([]byte, 64<<10)}
		if err := w.addTree(path); err != nil {
			w.close()
			return nil, err
		}
		return w, nil
	})
}

// watchError maps an inotify error about path: EMFILE (too many inotify
// instances) and ENOSPC (too many watches) are the kernel's limits, not a
// full disk.
func watchError(path string, err error) error {
	if errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENOSPC) {
		return &rpcError{kind: kindResourceExhausted, reason: "too_many_watches", subject: path,
			msg: "cannot watch " + path + ": the sandbox's inotify limits are reached", cause: err}
	}
	return fsError("watch", path, err)
}

// onNetworkMount reports whether path is on NFS, CIFS, SMB or FUSE, whose
// changes inotify may never see.
func onNetworkMount(path string) bool {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.NFS_SUPER_MAGIC, unix.CIFS_SUPER_MAGIC, unix.SMB_SUPER_MAGIC, unix.SMB2_SUPER_MAGIC, unix.FUSE_SUPER_MAGIC:
		return true
	}
	return false
}

// addTree watches dir and, if the watch is recursive, the directories
// below it that can be read.
func (w *dirWatch) addTree(dir string) error {
	if err := w.add(dir); err != nil {
		return err
	}
	if !w.recursive {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir && d.IsDir() {
			_ = w.add(p) // one it cannot read is not watched
		}
		return nil
	})
}

func (w *dirWatch) add(dir string) error {
	rc, err := w.f.SyscallConn()
	if err != nil {
		return fsError("watch", dir, err)
	}
	var wd int
	var addErr error
	if err := rc.Control(func(fd uintptr) { wd, addErr = unix.InotifyAddWatch(int(fd), dir, watchMask) }); err != nil {
		return fsError("watch", dir, err)
	}
	if addErr != nil {
		return watchError(dir, addErr)
	}
	w.dirs[int32(wd)] = dir
	return nil
}

func (w *dirWatch) close() { _ = w.f.Close() }

// next blocks until changes come and returns them; it fails once the
// watch is closed.
func (w *dirWatch) next() ([]watchEvent, error) {
	n, err := w.f.Read(w.buf)
	if err != nil {
		return nil, err
	}
	var out []watchEvent
	for off := 0; off+unix.SizeofInotifyEvent <= n; {
		b := w.buf[off:]
		wd := int32(binary.NativeEndian.Uint32(b[0:]))
		mask := binary.NativeEndian.Uint32(b[4:])
		nameLen := int(binary.NativeEndian.Uint32(b[12:]))
		name := strings.TrimRight(string(b[unix.SizeofInotifyEvent:unix.SizeofInotifyEvent+nameLen]), "\x00")
		off += unix.SizeofInotifyEvent + nameLen
		if mask&unix.IN_Q_OVERFLOW != 0 {
			return nil, errWatchOverflow
		}
		out = append(out, w.translate(wd, mask, name)...)
	}
	return out, nil
}

// translate turns one inotify event into envd's, as fsnotify names them
// (create, rename, chmod, write, remove; one event may be several).
func (w *dirWatch) translate(wd int32, mask uint32, name string) []watchEvent {
	dir, ok := w.dirs[wd]
	if !ok {
		return nil
	}
	if mask&unix.IN_IGNORED != 0 {
		delete(w.dirs, wd)
		return nil
	}
	if name == "" && dir != w.root {
		return nil // a subdirectory's own end: its parent reports it
	}
	path := filepath.Join(dir, name)
	if w.recursive && mask&unix.IN_ISDIR != 0 && mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
		_ = asUser(w.user, func() error { return w.addTree(path) })
	}
	var out []watchEvent
	for _, t := range []struct {
		mask uint32
		typ  fspb.EventType
	}{
		{unix.IN_CREATE | unix.IN_MOVED_TO, fspb.EventType_EVENT_TYPE_CREATE},
		{unix.IN_MOVED_FROM | unix.IN_MOVE_SELF, fspb.EventType_EVENT_TYPE_RENAME},
		{unix.IN_ATTRIB, fspb.EventType_EVENT_TYPE_CHMOD},
		{unix.IN_MODIFY, fspb.EventType_EVENT_TYPE_WRITE},
		{unix.IN_DELETE | unix.IN_DELETE_SELF, fspb.EventType_EVENT_TYPE_REMOVE},
	} {
		if mask&t.mask != 0 {
			out = append(out, watchEvent{path: path, typ: t.typ})
		}
	}
	return out
}

// event is e as envd sends it: its name relative to the watched
// directory and, if asked, the entry's info while it exists.
func (w *dirWatch) event(e watchEvent, withEntry bool) *fspb.FilesystemEvent {
	name, err := filepath.Rel(w.root, e.path)
	if err != nil {
		name = e.path
	}
	out := &fspb.FilesystemEvent{Name: name, Type: e.typ}
	if withEntry {
		out.Entry, _ = asCaller(w.user, func() (*fspb.EntryInfo, error) { return envdEntry(e.path) })
	}
	return out
}

// pump reads w until it is closed, handing each batch to out. It returns
// when w fails (its error to errc) or done is closed.
func (w *dirWatch) pump(out chan<- []watchEvent, errc chan<- error, done <-chan struct{}) {
	for {
		evs, err := w.next()
		if err != nil {
			errc <- err
			return
		}
		select {
		case out <- evs:
		case <-done:
			return
		}
	}
}

func (f *envdFilesystem) WatchDir(ctx context.Context, req *connect.Request[fspb.WatchDirRequest], stream *connect.ServerStream[fspb.WatchDirResponse]) error {
	m := req.Msg
	u, path, err := f.s.envdTarget(req.Header(), m.Path)
	if err != nil {
		return err
	}
	w, err := startWatch(u, path, m.Recursive, m.AllowNetworkMounts)
	if err != nil {
		return err
	}
	events, errc, done := make(chan []watchEvent), make(chan error, 1), make(chan struct{})
	pumped := make(chan struct{})
	go func() { defer close(pumped); w.pump(events, errc, done) }()
	defer func() { close(done); w.close(); <-pumped }()

	start := &fspb.WatchDirResponse{Event: &fspb.WatchDirResponse_Start{Start: &fspb.WatchDirResponse_StartEvent{}}}
	if err := stream.Send(start); err != nil {
		return err
	}
	interval := keepaliveInterval(req.Header().Get(keepaliveHeader))
	keepalive := time.NewTicker(interval)
	defer keepalive.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-f.s.quit:
			return errShuttingDown
		case err := <-errc:
			return fsError("watch", path, err)
		case <-keepalive.C:
			ka := &fspb.WatchDirResponse{Event: &fspb.WatchDirResponse_Keepalive{Keepalive: &fspb.WatchDirResponse_KeepAlive{}}}
			if err := stream.Send(ka); err != nil {
				return err
			}
		case evs := <-events:
			for _, e := range evs {
				ev := &fspb.WatchDirResponse{Event: &fspb.WatchDirResponse_Filesystem{Filesystem: w.event(e, m.IncludeEntry)}}
				if err := stream.Send(ev); err != nil {
					return err
				}
			}
			keepalive.Reset(interval)
		}
	}
}

// polledWatch is a watch whose events wait to be fetched
// (GetWatcherEvents), envd's non-streaming watcher.
type polledWatch struct {
	id         string
	w          *dirWatch
	withEntry  bool
	limit      int           // maxPolledEvents when it started
	limitBytes int           // maxPolledBytes when it started
	done       chan struct{} // closed by stop
	stopOnce   sync.Once

	// Guarded by the envdFilesystem's mu: the idle timer, and how many
	// times it was armed (an earlier arming's expiry changes nothing).
	idle  Timer
	armed uint64

	mu     sync.Mutex
	events []*fspb.FilesystemEvent
	size   int   // of events, encoded
	err    error // why it stopped watching
}

func (p *polledWatch) stop() { p.stopOnce.Do(func() { close(p.done); p.w.close() }) }

// collect keeps p's events until it stops.
func (p *polledWatch) collect() {
	for {
		evs, err := p.w.next()
		p.mu.Lock()
		if err != nil {
			if p.err == nil {
				p.err = err
			}
			p.mu.Unlock()
			return
		}
		for _, e := range evs {
			if p.err != nil {
				break
			}
			ev := p.w.event(e, p.withEntry)
			size := proto.Size(ev)
			if len(p.events) == p.limit || p.size+size > p.limitBytes {
				p.err, p.events, p.size = errWatchOverflow, nil, 0
				break
			}
			p.events = append(p.events, ev)
			p.size += size
		}
		p.mu.Unlock()
	}
}

func (f *envdFilesystem) CreateWatcher(ctx context.Context, req *connect.Request[fspb.CreateWatcherRequest]) (*connect.Response[fspb.CreateWatcherResponse], error) {
	m := req.Msg
	u, path, err := f.s.envdTarget(req.Header(), m.Path)
	if err != nil {
		return nil, err
	}
	w, err := startWatch(u, path, m.Recursive, m.AllowNetworkMounts)
	if err != nil {
		return nil, err
	}
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	id := "w" + hex.EncodeToString(rnd[:])
	p := &polledWatch{id: id, w: w, withEntry: m.IncludeEntry, limit: maxPolledEvents, limitBytes: maxPolledBytes, done: make(chan struct{})}
	f.mu.Lock()
	if len(f.watchers) >= maxPolledWatchers {
		f.mu.Unlock()
		w.close()
		return nil, &rpcError{kind: kindResourceExhausted, reason: "too_many_watchers", subject: path,
			msg: fmt.Sprintf("too many watchers: at most %d at once, remove one first", maxPolledWatchers)}
	}
	f.watchers[id] = p
	f.armLocked(p)
	f.mu.Unlock()
	f.s.wg.Go(p.collect)
	f.s.wg.Go(func() {
		select {
		case <-f.s.quit:
			p.stop()
		case <-p.done:
		}
	})
	return connect.NewResponse(&fspb.CreateWatcherResponse{WatcherId: id}), nil
}

// armLocked (re)starts p's idle timer: nobody polling it for
// polledWatchIdle removes it. f.mu is held.
func (f *envdFilesystem) armLocked(p *polledWatch) {
	if p.idle != nil {
		p.idle.Stop()
	}
	p.armed++
	armed := p.armed
	p.idle = f.s.procs.clock.AfterFunc(polledWatchIdle, func() { f.expire(p, armed) })
}

// expire removes p, which nobody polled since its timer's arming armed.
func (f *envdFilesystem) expire(p *polledWatch, armed uint64) {
	f.mu.Lock()
	if p.armed != armed || f.watchers[p.id] != p {
		f.mu.Unlock()
		return
	}
	delete(f.watchers, p.id)
	f.mu.Unlock()
	f.s.log.Debug("watcher not polled within its idle time", "id", p.id)
	p.stop()
}

// watcher returns the polled watch called id, removed (remove) or with
// its idle time started again.
func (f *envdFilesystem) watcher(id string, remove bool) (*polledWatch, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.watchers[id]
	if !ok {
		return nil, errNotFound("watcher_not_found", id, "watcher with id %s not found", id)
	}
	if !remove {
		f.armLocked(p)
		return p, nil
	}
	delete(f.watchers, id)
	p.idle.Stop()
	return p, nil
}

func (f *envdFilesystem) GetWatcherEvents(ctx context.Context, req *connect.Request[fspb.GetWatcherEventsRequest]) (*connect.Response[fspb.GetWatcherEventsResponse], error) {
	p, err := f.watcher(req.Msg.WatcherId, false)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		if errors.Is(p.err, os.ErrClosed) {
			return nil, errShuttingDown
		}
		return nil, fsError("watch", p.w.root, p.err)
	}
	events := p.events
	p.events, p.size = nil, 0
	return connect.NewResponse(&fspb.GetWatcherEventsResponse{Events: events}), nil
}

func (f *envdFilesystem) RemoveWatcher(ctx context.Context, req *connect.Request[fspb.RemoveWatcherRequest]) (*connect.Response[fspb.RemoveWatcherResponse], error) {
	p, err := f.watcher(req.Msg.WatcherId, true)
	if err != nil {
		return nil, err
	}
	p.stop()
	return connect.NewResponse(&fspb.RemoveWatcherResponse{}), nil
}
