package shim

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/agentpb/agentpbconnect"
)

// fileChunkSize is the most data one message of a file read carries: a
// file moves in a quarter as many messages as in chunkSize ones, each a
// hand-off between goroutines on both sides of the link, and well under
// maxMessageBytes.
const fileChunkSize = 1 << 20

const (
	defaultListEntries = 1000
	maxListEntries     = 100000
)

// fileService implements FileService.
type fileService struct{ s *Server }

var _ agentpbconnect.FileServiceHandler = (*fileService)(nil)

// fileInfo describes fi, found at path.
func fileInfo(path string, fi fs.FileInfo) *agentpb.FileInfo {
	out := &agentpb.FileInfo{
		Path:               path,
		Name:               fi.Name(),
		Size:               fi.Size(),
		Mode:               agentpb.PermBits(fi.Mode()),
		ModifiedAtUnixNano: fi.ModTime().UnixNano(),
	}
	if path == "/" {
		out.Name = "/"
	}
	m := fi.Mode()
	switch {
	case m.IsRegular():
		out.Type = agentpb.FileType_FILE_TYPE_FILE
	case m.IsDir():
		out.Type = agentpb.FileType_FILE_TYPE_DIRECTORY
	case m&fs.ModeSymlink != 0:
		out.Type = agentpb.FileType_FILE_TYPE_SYMLINK
		if target, err := os.Readlink(path); err == nil {
			out.SymlinkTarget = target
		}
	default:
		out.Type = agentpb.FileType_FILE_TYPE_OTHER
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		out.Uid, out.Gid = st.Uid, st.Gid
	}
	return out
}

func (h *fileService) Stat(ctx context.Context, req *connect.Request[agentpb.StatRequest]) (*connect.Response[agentpb.StatResponse], error) {
	path, err := cleanPath(req.Msg.Path)
	if err != nil {
		return nil, err
	}
	stat := os.Lstat
	if req.Msg.FollowSymlinks {
		stat = os.Stat
	}
	fi, err := stat(path)
	if err != nil {
		return nil, fsError("stat", path, err)
	}
	return connect.NewResponse(&agentpb.StatResponse{Info: fileInfo(path, fi)}), nil
}

// errListFull stops a walk once enough entries were found.
var errListFull = errors.New("list full")

func (h *fileService) List(ctx context.Context, req *connect.Request[agentpb.ListRequest]) (*connect.Response[agentpb.ListResponse], error) {
	m := req.Msg
	root, err := cleanPath(m.Path)
	if err != nil {
		return nil, err
	}
	limit := int(m.MaxEntries)
	switch {
	case limit < 0 || m.MaxDepth < 0:
		return nil, errInvalid("invalid_limit", "limits must not be negative")
	case limit == 0:
		limit = defaultListEntries
	case limit > maxListEntries:
		limit = maxListEntries
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fsError("list", root, err)
	}
	if !fi.IsDir() {
		return nil, errPrecondition("not_a_directory", root, "%s is not a directory", root)
	}
	out := &agentpb.ListResponse{}
	maxDepth := int(m.MaxDepth)
	if !m.Recursive {
		maxDepth = 1
	}
	// A trailing slash makes the walk follow root itself if it is a link.
	walkRoot := root
	if root != "/" {
		walkRoot = root + "/"
	}
	err = filepath.WalkDir(walkRoot, func(path string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if path == walkRoot {
			if err != nil {
				return fsError("list", root, err)
			}
			return nil
		}
		if err != nil {
			// An unreadable subdirectory is listed without its contents.
			return nil
		}
		if len(out.Entries) == limit {
			out.Truncated = true
			return errListFull
		}
		info, err := d.Info()
		if err != nil {
			return nil // vanished meanwhile
		}
		out.Entries = append(out.Entries, fileInfo(path, info))
		if d.IsDir() && maxDepth > 0 && depth(root, path) >= maxDepth {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil && !errors.Is(err, errListFull) {
		return nil, err
	}
	return connect.NewResponse(out), nil
}

// depth returns how many levels path is below root.
func depth(root, path string) int {
	rel := strings.TrimPrefix(path, root)
	return strings.Count(strings.Trim(rel, "/"), "/") + 1
}

func (h *fileService) Read(ctx context.Context, req *connect.Request[agentpb.ReadRequest], stream *connect.ServerStream[agentpb.ReadResponse]) error {
	m := req.Msg
	path, err := cleanPath(m.Path)
	if err != nil {
		return err
	}
	if m.Offset < 0 || m.Length < 0 {
		return errInvalid("invalid_range", "offset and length must not be negative")
	}
	f, fi, err := openRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := stream.Send(&agentpb.ReadResponse{Msg: &agentpb.ReadResponse_Info{Info: fileInfo(path, fi)}}); err != nil {
		return err
	}
	var r io.Reader = f
	if m.Offset > 0 {
		if _, err := f.Seek(m.Offset, io.SeekStart); err != nil {
			return fsError("read", path, err)
		}
	}
	if m.Length > 0 {
		r = io.LimitReader(f, m.Length)
	}
	buf := make([]byte, fileChunkSize)
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if serr := stream.Send(&agentpb.ReadResponse{Msg: &agentpb.ReadResponse_Data{Data: buf[:n]}}); serr != nil {
				return serr
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return fsError("read", path, err)
		}
	}
}

func (h *fileService) Write(ctx context.Context, stream *connect.ClientStream[agentpb.WriteRequest]) (*connect.Response[agentpb.WriteResponse], error) {
	if !stream.Receive() {
		if err := stream.Err(); err != nil {
			return nil, err
		}
		return nil, errInvalid("missing_header", "the first message must be a header")
	}
	hdr := stream.Msg().GetHeader()
	if hdr == nil {
		return nil, errInvalid("missing_header", "the first message must be a header")
	}
	w, err := newFileWrite(hdr)
	if err != nil {
		return nil, err
	}
	defer w.discard()
	for stream.Receive() {
		data := stream.Msg().GetData()
		if stream.Msg().GetHeader() != nil {
			return nil, errInvalid("duplicate_header", "only the first message may be a header")
		}
		if _, err := w.tmp.Write(data); err != nil {
			return nil, fsError("write", w.path, err)
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	info, err := w.commit()
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentpb.WriteResponse{Info: info}), nil
}

// fileWrite is a Write under way: the temporary file beside the target
// that the data goes into, renamed into place by commit.
type fileWrite struct {
	hdr       *agentpb.WriteHeader
	path      string
	mode      fs.FileMode
	tmp       *os.File
	committed bool
}

// newFileWrite checks hdr's target (writeTarget) and opens the temporary
// file. Call discard when done: it removes the file unless committed.
func newFileWrite(hdr *agentpb.WriteHeader) (*fileWrite, error) {
	path, dir, mode, err := writeTarget(hdr)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, ".paddock-write-*")
	if err != nil {
		return nil, fsError("write", path, err)
	}
	return &fileWrite{hdr: hdr, path: path, mode: mode, tmp: tmp}, nil
}

// commit gives the file its mode and renames it into place (or links it,
// refusing an existing target, under NoOverwrite), and describes it.
func (w *fileWrite) commit() (*agentpb.FileInfo, error) {
	if err := w.tmp.Chmod(w.mode); err != nil {
		return nil, fsError("chmod", w.path, err)
	}
	if err := w.tmp.Close(); err != nil {
		return nil, fsError("write", w.path, err)
	}
	tmpName := w.tmp.Name()
	if w.hdr.NoOverwrite {
		// link(2) refuses an existing target atomically.
		if err := os.Link(tmpName, w.path); err != nil {
			return nil, fsError("write", w.path, err)
		}
		_ = os.Remove(tmpName)
	} else if err := os.Rename(tmpName, w.path); err != nil {
		return nil, fsError("write", w.path, err)
	}
	w.committed = true
	fi, err := os.Lstat(w.path)
	if err != nil {
		return nil, fsError("stat", w.path, err)
	}
	return fileInfo(w.path, fi), nil
}

// discard removes the temporary file unless the write was committed.
func (w *fileWrite) discard() {
	if !w.committed {
		_ = w.tmp.Close()
		_ = os.Remove(w.tmp.Name())
	}
}

// writeTarget checks where hdr asks Write to write, making the parent
// directory dir if asked, and returns the clean path and the mode to give
// the file: hdr's, else the regular file's it replaces, else 0644.
func writeTarget(hdr *agentpb.WriteHeader) (path, dir string, mode fs.FileMode, err error) {
	path, err = cleanPath(hdr.Path)
	if err != nil {
		return "", "", 0, err
	}
	if hdr.Mode > 0o7777 {
		return "", "", 0, errInvalid("invalid_mode", "mode %o is not a permission mode", hdr.Mode)
	}
	dir = filepath.Dir(path)
	if hdr.CreateParents {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", "", 0, fsError("mkdir", dir, err)
		}
	}
	mode = agentpb.FileMode(hdr.Mode)
	existing, err := os.Lstat(path)
	switch {
	case err == nil && existing.IsDir():
		return "", "", 0, errPrecondition("is_a_directory", path, "%s is a directory", path)
	case err == nil && hdr.NoOverwrite:
		return "", "", 0, &rpcError{kind: kindExists, reason: "file_exists", subject: path, msg: path + ": already exists"}
	case err == nil && mode == 0 && existing.Mode().IsRegular():
		mode = existing.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", "", 0, fsError("write", path, err)
	}
	if mode == 0 && hdr.Mode == 0 {
		mode = 0o644
	}
	return path, dir, mode, nil
}

func (h *fileService) Mkdir(ctx context.Context, req *connect.Request[agentpb.MkdirRequest]) (*connect.Response[agentpb.MkdirResponse], error) {
	path, err := cleanPath(req.Msg.Path)
	if err != nil {
		return nil, err
	}
	mode := agentpb.FileMode(req.Msg.Mode)
	if req.Msg.Mode > 0o7777 {
		return nil, errInvalid("invalid_mode", "mode %o is not a permission mode", req.Msg.Mode)
	}
	if mode == 0 {
		mode = 0o755
	}
	if req.Msg.Parents {
		err = os.MkdirAll(path, mode)
	} else {
		err = os.Mkdir(path, mode)
	}
	if err != nil {
		return nil, fsError("mkdir", path, err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fsError("stat", path, err)
	}
	return connect.NewResponse(&agentpb.MkdirResponse{Info: fileInfo(path, fi)}), nil
}

func (h *fileService) Remove(ctx context.Context, req *connect.Request[agentpb.RemoveRequest]) (*connect.Response[agentpb.RemoveResponse], error) {
	path, err := cleanPath(req.Msg.Path)
	if err != nil {
		return nil, err
	}
	if path == "/" {
		return nil, errInvalid("invalid_path", "refusing to remove /")
	}
	if _, err := os.Lstat(path); err != nil {
		return nil, fsError("remove", path, err)
	}
	if req.Msg.Recursive {
		err = os.RemoveAll(path)
	} else {
		err = os.Remove(path)
	}
	if err != nil {
		return nil, fsError("remove", path, err)
	}
	return connect.NewResponse(&agentpb.RemoveResponse{}), nil
}

func (h *fileService) Rename(ctx context.Context, req *connect.Request[agentpb.RenameRequest]) (*connect.Response[agentpb.RenameResponse], error) {
	from, err := cleanPath(req.Msg.From)
	if err != nil {
		return nil, err
	}
	to, err := cleanPath(req.Msg.To)
	if err != nil {
		return nil, err
	}
	if req.Msg.NoOverwrite {
		err = unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
		if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) {
			// The file system cannot do it atomically.
			if _, serr := os.Lstat(to); serr == nil {
				err = syscall.EEXIST
			} else {
				err = os.Rename(from, to)
			}
		}
	} else {
		err = os.Rename(from, to)
	}
	if err != nil {
		subject := from
		if errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EISDIR) {
			subject = to
		}
		return nil, fsError("rename", subject, err)
	}
	return connect.NewResponse(&agentpb.RenameResponse{}), nil
}

// openRegular opens a regular file (through links) for reading, refusing
// anything else before reading from it: a directory, and a FIFO, socket or
// device, whose reads block or fail (not_a_regular_file). The open does not
// block even if the path turns into a FIFO meanwhile.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	notRegular := func(fi os.FileInfo) error {
		if fi.IsDir() {
			return errPrecondition("is_a_directory", path, "%s is a directory", path)
		}
		return errPrecondition("not_a_regular_file", path, "%s is not a regular file (%s); only regular files can be read", path, fileKind(fi.Mode()))
	}
	if fi, err := os.Stat(path); err != nil {
		return nil, nil, fsError("read", path, err)
	} else if !fi.Mode().IsRegular() {
		return nil, nil, notRegular(fi)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, fsError("read", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, fsError("read", path, err)
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, nil, notRegular(fi)
	}
	return f, fi, nil
}

// fileKind names what a non-regular file is.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}
