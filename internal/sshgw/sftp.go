package sshgw

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pkg/sftp"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// SFTP is served here, not in the sandbox: pkg/sftp's request server
// speaks the protocol, and its requests are answered with the agent's file
// calls (stat, list, read, write, mkdir, remove, rename). What those lack
// (chmod, chown, times, truncate, links) runs as a small command in the
// sandbox. Relative paths start at the workspace.
//
// A file the client writes may be written in any order and at any offset,
// while the agent writes a file whole: so each file open for writing is
// gathered in a spool file here (its old contents first, unless it is
// truncated) and sent to the sandbox when the client closes it; the close
// reports whether that worked. A file open for reading is fetched into a
// spool file in the background and read from it as it arrives. Spool files
// are unlinked as soon as they are made, and a file larger than
// Config.MaxFileBytes is refused either way.

// maxOpenFiles bounds the files one SFTP session holds open.
const maxOpenFiles = 32

// maxListEntries is the most entries a directory listing returns (the
// agent's own cap).
const maxListEntries = 100000

// sftp serves the sftp subsystem on the session's channel.
func (s *session) sftp(agent *agentconn.Client) {
	fsys := &sftpFS{
		ctx: s.ctx, logger: s.c.g.logger, agent: agent, maxFile: s.c.g.cfg.MaxFileBytes, spoolDir: s.c.g.cfg.SpoolDir,
		spooled: &s.c.g.spooled, maxSpool: s.c.g.cfg.MaxSpoolBytes,
		writing: map[string]*spool{},
	}
	h := sftp.Handlers{FileGet: fsys, FilePut: fsys, FileCmd: fsys, FileList: fsys}
	srv := sftp.NewRequestServer(s.ch, h, sftp.WithStartDirectory(provider.WorkspacePath))
	err := srv.Serve()
	if err != nil && !errors.Is(err, io.EOF) && s.ctx.Err() == nil {
		s.c.g.logger.Info("sftp session ended", "client", s.c.client, "runtime", s.c.grant.runtimeID, "err", err)
		return
	}
	s.exit(agentconn.ExitStatus{})
}

// sftpFS answers one SFTP session's requests from a sandbox's agent.
type sftpFS struct {
	ctx      context.Context
	logger   *slog.Logger
	agent    *agentconn.Client
	maxFile  int64
	spoolDir string
	// spooled counts the bytes every session's spool files hold, up to
	// maxSpool.
	spooled  *atomic.Int64
	maxSpool int64

	mu      sync.Mutex
	open    int               // files open (spools and fetches)
	writing map[string]*spool // files open for writing, by path
}

var (
	_ sftp.FileReader           = (*sftpFS)(nil)
	_ sftp.OpenFileWriter       = (*sftpFS)(nil)
	_ sftp.PosixRenameFileCmder = (*sftpFS)(nil)
	_ sftp.LstatFileLister      = (*sftpFS)(nil)
	_ sftp.ReadlinkFileLister   = (*sftpFS)(nil)
)

// fsError turns an agent's error into what the SFTP client sees: no such
// file, permission denied, or a failure with the public message.
func fsError(err error) error {
	switch {
	case err == nil:
		return nil
	case errdefs.IsNotFound(err):
		return os.ErrNotExist
	case errors.Is(err, errdefs.ErrPermissionDenied):
		return syscall.EACCES
	}
	msg := errdefs.PublicMessage(err, "the operation failed in the sandbox")
	if pe, ok := errdefs.Public(err); ok && pe.Code != "" {
		msg += " (" + pe.Code + ")"
	}
	return errors.New(msg)
}

// tooLarge refuses a file over the limit.
func (f *sftpFS) tooLarge() error {
	return fmt.Errorf("file larger than the gateway's limit of %d bytes", f.maxFile)
}

// errSpoolFull refuses a file the gateway has no room for now.
var errSpoolFull = errors.New("the gateway has no room to hold the file now; try again later")

// reserve takes n bytes of the gateway's spool space; a negative n gives
// them back.
func (f *sftpFS) reserve(n int64) error {
	if f.spooled.Add(n) > f.maxSpool && n > 0 {
		f.spooled.Add(-n)
		return errSpoolFull
	}
	return nil
}

// acquire counts an open file against the session's limit.
func (f *sftpFS) acquire() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.open >= maxOpenFiles {
		return fmt.Errorf("too many open files (at most %d)", maxOpenFiles)
	}
	f.open++
	return nil
}

func (f *sftpFS) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open--
}

// tempFile makes an unlinked spool file. Why it could not is logged, not
// told: it names the server's paths.
func (f *sftpFS) tempFile() (*os.File, error) {
	t, err := os.CreateTemp(f.spoolDir, "paddock-sftp-")
	if err == nil {
		if err = os.Remove(t.Name()); err != nil {
			t.Close()
		}
	}
	if err != nil {
		f.logger.Error("sftp spool file", "err", err)
		return nil, errors.New("the gateway cannot hold the file now")
	}
	return t, nil
}

// Fileread opens a file for reading: its contents are fetched in the
// background.
func (f *sftpFS) Fileread(r *sftp.Request) (io.ReaderAt, error) {
	if err := f.acquire(); err != nil {
		return nil, err
	}
	// The fetch's context ends its stream when the file is closed.
	ctx, cancel := context.WithCancel(f.ctx)
	fail := func(err error) (io.ReaderAt, error) {
		cancel()
		f.release()
		return nil, err
	}
	rd, err := f.agent.ReadFile(ctx, r.Filepath)
	if err != nil {
		return fail(fsError(err))
	}
	if rd.Info().Size > f.maxFile {
		rd.Close()
		return fail(f.tooLarge())
	}
	tmp, err := f.tempFile()
	if err != nil {
		rd.Close()
		return fail(err)
	}
	ft := &fetch{fs: f, f: tmp, cancel: cancel, done: make(chan struct{})}
	ft.cond = sync.NewCond(&ft.mu)
	go ft.run(rd)
	return ft, nil
}

// fetch is a file being read: a spool file the agent's stream fills, read
// at any offset as soon as the bytes are there.
type fetch struct {
	fs     *sftpFS
	f      *os.File
	cancel context.CancelFunc
	done   chan struct{} // closed when run returns

	mu       sync.Mutex
	cond     *sync.Cond
	have     int64 // bytes in f, reserved in the spool space
	finished bool
	err      error // why the fetch stopped early
	closed   sync.Once
}

// run copies the file into the spool until it ends, fails, or the fetch
// is closed (which cancels the stream's context).
func (ft *fetch) run(rd *agentconn.FileReader) {
	defer close(ft.done)
	defer rd.Close()
	buf := make([]byte, 256<<10)
	var err error
	for {
		n, rerr := rd.Read(buf)
		if n > 0 {
			ft.mu.Lock()
			at := ft.have
			ft.mu.Unlock()
			if at+int64(n) > ft.fs.maxFile {
				err = ft.fs.tooLarge()
				break
			}
			if err = ft.fs.reserve(int64(n)); err != nil {
				break
			}
			if _, werr := ft.f.WriteAt(buf[:n], at); werr != nil {
				ft.fs.reserve(-int64(n))
				ft.fs.logger.Error("sftp spool file", "err", werr)
				err = errors.New("the gateway cannot hold the file now")
				break
			}
			ft.mu.Lock()
			ft.have += int64(n)
			ft.cond.Broadcast()
			ft.mu.Unlock()
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			err = fsError(rerr)
			break
		}
	}
	ft.mu.Lock()
	ft.finished, ft.err = true, err
	ft.cond.Broadcast()
	ft.mu.Unlock()
}

// ReadAt waits until the bytes asked for have arrived, or the fetch ended.
func (ft *fetch) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	ft.mu.Lock()
	for ft.have < off+int64(len(p)) && !ft.finished {
		ft.cond.Wait()
	}
	have, err := ft.have, ft.err
	ft.mu.Unlock()
	if off >= have {
		if err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), have-off))
	if _, rerr := ft.f.ReadAt(p[:n], off); rerr != nil {
		return 0, rerr
	}
	if n < len(p) {
		if err != nil {
			return n, err
		}
		return n, io.EOF
	}
	return n, nil
}

// Close stops the fetch and drops the spool file.
func (ft *fetch) Close() error {
	ft.closed.Do(func() {
		ft.cancel()
		<-ft.done
		ft.f.Close()
		ft.fs.reserve(-ft.have)
		ft.fs.release()
	})
	return nil
}

// Filewrite opens a file for writing.
func (f *sftpFS) Filewrite(r *sftp.Request) (io.WriterAt, error) {
	sp, err := f.openWrite(r)
	if err != nil {
		return nil, err
	}
	return sp, nil
}

// OpenFile opens a file for reading and writing.
func (f *sftpFS) OpenFile(r *sftp.Request) (sftp.WriterAtReaderAt, error) {
	sp, err := f.openWrite(r)
	if err != nil {
		return nil, err
	}
	return sp, nil
}

// openWrite opens a spool for r's file, as open(2) with r's flags would:
// an existing file keeps its contents unless truncated; O_CREAT makes a
// missing one (with the mode the client gives); O_EXCL refuses an
// existing one.
func (f *sftpFS) openWrite(r *sftp.Request) (*spool, error) {
	flags := r.Pflags()
	info, err := f.agent.Stat(f.ctx, r.Filepath)
	exists := err == nil
	switch {
	case err != nil && !errdefs.IsNotFound(err):
		return nil, fsError(err)
	case exists && flags.Creat && flags.Excl:
		return nil, os.ErrExist
	case exists && info.IsDir():
		return nil, errors.New("is a directory")
	case !exists && !flags.Creat:
		return nil, os.ErrNotExist
	}
	if exists && !flags.Trunc && info.Size > f.maxFile {
		return nil, f.tooLarge()
	}
	if err := f.acquire(); err != nil {
		return nil, err
	}
	tmp, err := f.tempFile()
	if err != nil {
		f.release()
		return nil, err
	}
	sp := &spool{fs: f, path: r.Filepath, f: tmp, noOverwrite: flags.Excl}
	if !exists {
		sp.mode = openMode(r.Attrs)
	}
	if exists && !flags.Trunc {
		if err := sp.load(); err != nil {
			sp.discard()
			return nil, err
		}
	}
	f.mu.Lock()
	f.writing[sp.path] = sp
	f.mu.Unlock()
	return sp, nil
}

// openMode reads the permissions an open request gives a new file. The
// request server keeps the attributes but not their flags; OpenSSH's
// clients send the permissions alone (4 bytes), which is all this reads.
func openMode(attrs []byte) fs.FileMode {
	if len(attrs) != 4 {
		return 0
	}
	return fs.FileMode(uint32(attrs[0])<<24|uint32(attrs[1])<<16|uint32(attrs[2])<<8|uint32(attrs[3])) & fs.ModePerm
}

// writingAt returns the spool of a file open for writing at path.
func (f *sftpFS) writingAt(p string) *spool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writing[p]
}

// spool is a file open for writing.
type spool struct {
	fs          *sftpFS
	path        string
	f           *os.File
	noOverwrite bool

	mu       sync.Mutex
	size     int64
	reserved int64       // bytes of the spool space it holds
	mode     fs.FileMode // 0: keep the file's, or the agent's default
	owner    string      // "uid:gid" to set after the upload, if any
	times    []time.Time // atime and mtime to set after the upload, if any
	failed   error       // the transfer broke: nothing is uploaded
	closed   bool
}

// load fills the spool with the file's current contents.
func (sp *spool) load() error {
	rd, err := sp.fs.agent.ReadFile(sp.fs.ctx, sp.path)
	if err != nil {
		return fsError(err)
	}
	defer rd.Close()
	// Space is reserved chunk by chunk as the file arrives, so opening
	// many large files at once cannot write past the spool's bound.
	buf := make([]byte, 256<<10)
	var n int64
	for {
		k, rerr := rd.Read(buf)
		if k > 0 {
			if n+int64(k) > sp.fs.maxFile {
				sp.fs.reserve(-n)
				return sp.fs.tooLarge()
			}
			if err := sp.fs.reserve(int64(k)); err != nil {
				sp.fs.reserve(-n)
				return err
			}
			n += int64(k)
			if _, err := sp.f.Write(buf[:k]); err != nil {
				sp.fs.reserve(-n)
				return fsError(err)
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			sp.fs.reserve(-n)
			return fsError(rerr)
		}
	}
	sp.size, sp.reserved = n, n
	return nil
}

// grow reserves spool space for a file of size bytes.
func (sp *spool) grow(size int64) error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if more := size - sp.reserved; more > 0 {
		if err := sp.fs.reserve(more); err != nil {
			return err
		}
		sp.reserved = size
	}
	return nil
}

func (sp *spool) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	end := off + int64(len(p))
	if end > sp.fs.maxFile {
		return 0, sp.fs.tooLarge()
	}
	if err := sp.grow(end); err != nil {
		return 0, err
	}
	n, err := sp.f.WriteAt(p, off)
	sp.mu.Lock()
	sp.size = max(sp.size, off+int64(n))
	sp.mu.Unlock()
	if err != nil {
		sp.fs.logger.Error("sftp spool file", "err", err)
		return n, errors.New("the gateway cannot hold the file now")
	}
	return n, nil
}

func (sp *spool) ReadAt(p []byte, off int64) (int, error) {
	sp.mu.Lock()
	size := sp.size
	sp.mu.Unlock()
	if off >= size {
		return 0, io.EOF
	}
	n, err := sp.f.ReadAt(p[:min(int64(len(p)), size-off)], off)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// truncate sets the file's size, as ftruncate(2).
func (sp *spool) truncate(size int64) error {
	if size < 0 {
		return syscall.EINVAL
	}
	if size > sp.fs.maxFile {
		return sp.fs.tooLarge()
	}
	if err := sp.grow(size); err != nil {
		return err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if err := sp.f.Truncate(size); err != nil {
		sp.fs.logger.Error("sftp spool file", "err", err)
		return errors.New("the gateway cannot hold the file now")
	}
	sp.size = size
	if sp.reserved > size {
		sp.fs.reserve(size - sp.reserved)
		sp.reserved = size
	}
	return nil
}

// TransferError is told when the session ended with the file open: it is
// not uploaded.
func (sp *spool) TransferError(err error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.failed = err
}

// Close sends the file to the sandbox, whole, then sets what setstat asked
// for meanwhile.
func (sp *spool) Close() error {
	sp.mu.Lock()
	if sp.closed {
		sp.mu.Unlock()
		return nil
	}
	sp.closed = true
	size, mode, owner, times, failed := sp.size, sp.mode, sp.owner, sp.times, sp.failed
	sp.mu.Unlock()
	defer sp.discard()
	if failed != nil {
		return nil // the session is gone; nobody hears the answer
	}
	_, err := sp.fs.agent.WriteFileWith(sp.fs.ctx, sp.path, io.NewSectionReader(sp.f, 0, size),
		agentconn.WriteOptions{Mode: mode, NoOverwrite: sp.noOverwrite})
	if err != nil {
		return fsError(err)
	}
	return sp.fs.setAttrs(sp.path, -1, 0, owner, times)
}

// discard drops the spool file.
func (sp *spool) discard() {
	sp.fs.mu.Lock()
	if sp.fs.writing[sp.path] == sp {
		delete(sp.fs.writing, sp.path)
	}
	sp.fs.mu.Unlock()
	sp.f.Close()
	sp.mu.Lock()
	sp.fs.reserve(-sp.reserved)
	sp.reserved = 0
	sp.mu.Unlock()
	sp.fs.release()
}

// Filecmd runs the requests that change the file tree.
func (f *sftpFS) Filecmd(r *sftp.Request) error {
	switch r.Method {
	case "Setstat":
		return f.setstat(r)
	case "Rename":
		// SFTP version 3 renames without replacing, as OpenSSH's server.
		return fsError(f.agent.RenameNoReplace(f.ctx, r.Filepath, r.Target))
	case "Rmdir", "Remove":
		info, err := f.agent.Lstat(f.ctx, r.Filepath)
		if err != nil {
			return fsError(err)
		}
		if info.IsDir() != (r.Method == "Rmdir") {
			if info.IsDir() {
				return errors.New("is a directory")
			}
			return errors.New("not a directory")
		}
		return fsError(f.agent.Remove(f.ctx, r.Filepath))
	case "Mkdir":
		_, err := f.agent.Mkdir(f.ctx, r.Filepath, 0)
		return fsError(err)
	case "Symlink":
		// Filepath is the link's target as given, Target the link.
		return f.command("ln", "-s", "--", r.Filepath, r.Target)
	case "Link":
		return f.command("ln", "--", r.Filepath, r.Target)
	}
	return sftp.ErrSSHFxOpUnsupported
}

// PosixRename renames, replacing the target (posix-rename@openssh.com).
func (f *sftpFS) PosixRename(r *sftp.Request) error {
	return fsError(f.agent.Rename(f.ctx, r.Filepath, r.Target))
}

// setstat changes a file's size, mode, owner or times. A file open for
// writing here gets them with its upload.
func (f *sftpFS) setstat(r *sftp.Request) error {
	flags, attrs := r.AttrFlags(), r.Attributes()
	size := int64(-1)
	if flags.Size {
		size = int64(attrs.Size)
	}
	var mode uint32
	if flags.Permissions {
		mode = attrs.Mode&0o7777 | 1<<31 // the high bit says "set"
	}
	var owner string
	if flags.UidGid {
		owner = fmt.Sprintf("%d:%d", attrs.UID, attrs.GID)
	}
	var times []time.Time
	if flags.Acmodtime {
		times = []time.Time{time.Unix(int64(attrs.Atime), 0), time.Unix(int64(attrs.Mtime), 0)}
	}
	if sp := f.writingAt(r.Filepath); sp != nil {
		if size >= 0 {
			if err := sp.truncate(size); err != nil {
				return err
			}
		}
		sp.mu.Lock()
		defer sp.mu.Unlock()
		if mode != 0 {
			sp.mode = fs.FileMode(mode & 0o777)
		}
		if owner != "" {
			sp.owner = owner
		}
		if times != nil {
			sp.times = times
		}
		return nil
	}
	if size >= 0 && size > f.maxFile {
		return f.tooLarge()
	}
	return f.setAttrs(r.Filepath, size, mode, owner, times)
}

// setAttrs applies attributes to a file in the sandbox with the commands
// that set them; size -1 and zero values leave those alone.
func (f *sftpFS) setAttrs(p string, size int64, mode uint32, owner string, times []time.Time) error {
	if size >= 0 {
		if err := f.command("truncate", "-s", strconv.FormatInt(size, 10), "--", p); err != nil {
			return err
		}
	}
	if mode != 0 {
		if err := f.command("chmod", strconv.FormatUint(uint64(mode&0o7777), 8), "--", p); err != nil {
			return err
		}
	}
	if owner != "" {
		if err := f.command("chown", owner, "--", p); err != nil {
			return err
		}
	}
	if times != nil {
		if err := f.command("touch", "-c", "-a", "-d", "@"+strconv.FormatInt(times[0].Unix(), 10), "--", p); err != nil {
			return err
		}
		if err := f.command("touch", "-c", "-m", "-d", "@"+strconv.FormatInt(times[1].Unix(), 10), "--", p); err != nil {
			return err
		}
	}
	return nil
}

// command runs argv in the sandbox; a failure says what it printed.
func (f *sftpFS) command(argv ...string) error {
	res, err := f.agent.Run(f.ctx, agentconn.ExecRequest{Argv: argv})
	if err != nil {
		return fsError(err)
	}
	if res.Exit.Code != 0 {
		msg := strings.TrimSpace(string(res.Stderr))
		if msg == "" {
			msg = fmt.Sprintf("%s exited with status %d", argv[0], res.Exit.Code)
		}
		return errors.New(truncate(msg, 200))
	}
	return nil
}

// Filelist lists a directory, or describes one file (Stat).
func (f *sftpFS) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	switch r.Method {
	case "List":
		entries, _, err := f.agent.List(f.ctx, r.Filepath, agentconn.ListOptions{MaxEntries: maxListEntries})
		if err != nil {
			return nil, fsError(err)
		}
		out := make(listerAt, 0, len(entries))
		for _, e := range entries {
			out = append(out, fileInfo{e})
		}
		return out, nil
	case "Stat":
		if sp := f.writingAt(r.Filepath); sp != nil {
			return sp.stat()
		}
		info, err := f.agent.Stat(f.ctx, r.Filepath)
		if err != nil {
			return nil, fsError(err)
		}
		return listerAt{fileInfo{info}}, nil
	}
	return nil, sftp.ErrSSHFxOpUnsupported
}

// stat describes a file open for writing as it will be once uploaded.
func (sp *spool) stat() (sftp.ListerAt, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	mode := sp.mode
	if mode == 0 {
		mode = 0o644
	}
	return listerAt{fileInfo{agentconn.FileInfo{
		Path: sp.path, Name: path.Base(sp.path), Size: sp.size, Mode: mode, ModTime: time.Now(),
	}}}, nil
}

// Lstat describes a file without following a final link.
func (f *sftpFS) Lstat(r *sftp.Request) (sftp.ListerAt, error) {
	info, err := f.agent.Lstat(f.ctx, r.Filepath)
	if err != nil {
		return nil, fsError(err)
	}
	return listerAt{fileInfo{info}}, nil
}

// Readlink returns a link's target.
func (f *sftpFS) Readlink(p string) (string, error) {
	info, err := f.agent.Lstat(f.ctx, p)
	if err != nil {
		return "", fsError(err)
	}
	if info.Mode&fs.ModeSymlink == 0 {
		return "", syscall.EINVAL
	}
	return info.SymlinkTarget, nil
}

// listerAt serves a listing from memory.
type listerAt []os.FileInfo

func (l listerAt) ListAt(ls []os.FileInfo, off int64) (int, error) {
	if off >= int64(len(l)) {
		return 0, io.EOF
	}
	n := copy(ls, l[off:])
	if n < len(ls) {
		return n, io.EOF
	}
	return n, nil
}

// fileInfo is an agent's description of a file as an os.FileInfo, with
// its owner.
type fileInfo struct{ fi agentconn.FileInfo }

var _ sftp.FileInfoUidGid = fileInfo{}

func (i fileInfo) Name() string {
	if i.fi.Name != "" {
		return i.fi.Name
	}
	return path.Base(i.fi.Path)
}
func (i fileInfo) Size() int64        { return i.fi.Size }
func (i fileInfo) Mode() fs.FileMode  { return i.fi.Mode }
func (i fileInfo) ModTime() time.Time { return i.fi.ModTime }
func (i fileInfo) IsDir() bool        { return i.fi.IsDir() }
func (i fileInfo) Sys() any           { return nil }
func (i fileInfo) Uid() uint32        { return i.fi.UID }
func (i fileInfo) Gid() uint32        { return i.fi.GID }
