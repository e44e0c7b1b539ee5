package shim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	fspb "github.com/paddockhq/paddock/internal/agentpb/envd/filesystem"
	"github.com/paddockhq/paddock/internal/agentpb/envd/filesystem/filesystemconnect"
)

// maxEnvdAnswerBytes bounds one answer of envd's filesystem service.
const maxEnvdAnswerBytes = 128 << 20

// maxListBytes bounds the entries a listing builds (their encoded size; a
// variable for tests): past it, it stops walking and fails, rather than
// holding more than it could answer.
var maxListBytes = maxEnvdAnswerBytes

// envdFilesystem implements envd's filesystem.Filesystem. Each call runs
// as its caller (see envdCaller): what the caller may not touch, the call
// may not either, and what it creates is the caller's.
type envdFilesystem struct {
	s *Server

	mu       sync.Mutex
	watchers map[string]*polledWatch // by id: CreateWatcher's
}

var _ filesystemconnect.FilesystemHandler = (*envdFilesystem)(nil)

// registerEnvdFilesystem serves envd's filesystem.Filesystem, GET
// /health and GET and POST /files.
func (s *Server) registerEnvdFilesystem(hopts []connect.HandlerOption) {
	f := &envdFilesystem{s: s, watchers: map[string]*polledWatch{}}
	// A listing or a poll answers in one message, which envd does not
	// bound: a directory of many thousand entries must fit.
	opts := append(slices.Clip(hopts), connect.WithSendMaxBytes(maxEnvdAnswerBytes))
	s.mux.Handle(filesystemconnect.NewFilesystemHandler(f, opts...))
	s.mux.HandleFunc("GET /health", envdHealth)
	s.mux.HandleFunc("GET /files", s.envdDownload)
	s.mux.HandleFunc("POST /files", s.envdUpload)
}

// envdCaller returns the user an envd request acts as: the one named by
// username (the /files query's), else the one of its Authorization header
// (see envdUser).
func (s *Server) envdCaller(h http.Header, username string) (sandboxUser, error) {
	if username == "" {
		return s.envdUser(h)
	}
	u, err := lookupUser(username, s.user)
	if err != nil {
		return sandboxUser{}, connect.NewError(connect.CodeUnauthenticated, errors.New("invalid username: '"+username+"'"))
	}
	return u, mayBecome(u)
}

// homeDir is u's home; the agent's own identity (outside a sandbox, in
// tests) has the process's.
func (u sandboxUser) homeDir() string {
	if u.home != "" {
		return u.home
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/"
}

// envdPath resolves a path as envd does: "~" and "~/…" name u's home, a
// relative path is relative to it (the empty path is the home itself).
func envdPath(p string, u sandboxUser) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", errInvalid("invalid_path", "path contains a NUL byte")
	}
	home := u.homeDir()
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		p = home + p[1:]
	case strings.HasPrefix(p, "~"):
		return "", errInvalid("invalid_path", "cannot expand %q: only the caller's own home (~) can be named", p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(home, p)
	}
	return filepath.Clean(p), nil
}

// envdTarget returns a call's user and the path it names.
func (s *Server) envdTarget(h http.Header, p string) (sandboxUser, string, error) {
	u, err := s.envdCaller(h, "")
	if err != nil {
		return sandboxUser{}, "", err
	}
	path, err := envdPath(p, u)
	return u, path, err
}

// asCaller runs fn as u and returns its result.
func asCaller[T any](u sandboxUser, fn func() (T, error)) (T, error) {
	var out T
	err := asUser(u, func() error {
		var err error
		out, err = fn()
		return err
	})
	return out, err
}

// envdEntry describes what is at path (a link itself, not its target).
func envdEntry(path string) (*fspb.EntryInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fsError("stat", path, err)
	}
	return envdEntryOf(path, fi, newIDNames()), nil
}

// envdEntryOf describes fi, found at path, as envd does: a symbolic link
// has its target's type and permission bits, and the target resolved.
func envdEntryOf(path string, fi fs.FileInfo, names *idNames) *fspb.EntryInfo {
	m := fi.Mode()
	e := &fspb.EntryInfo{
		Name:         fi.Name(),
		Path:         path,
		Size:         fi.Size(),
		Permissions:  m.String(),
		ModifiedTime: timestamppb.New(fi.ModTime()),
	}
	target := fi
	if m&fs.ModeSymlink != 0 {
		resolved, err := filepath.EvalSymlinks(path)
		if err != nil {
			resolved = path
		}
		e.SymlinkTarget = &resolved
		target = nil
		if ti, err := os.Stat(resolved); err == nil {
			target = ti
		}
	}
	if target != nil {
		e.Type = envdFileType(target.Mode())
		e.Mode = uint32(target.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.Owner, e.Group = names.user(st.Uid), names.group(st.Gid)
	}
	e.Metadata = fileMetadata(path)
	return e
}

func envdFileType(m fs.FileMode) fspb.FileType {
	switch {
	case m.IsRegular():
		return fspb.FileType_FILE_TYPE_FILE
	case m.IsDir():
		return fspb.FileType_FILE_TYPE_DIRECTORY
	case m&fs.ModeSymlink != 0:
		return fspb.FileType_FILE_TYPE_SYMLINK
	}
	return fspb.FileType_FILE_TYPE_UNSPECIFIED
}

// idNames names accounts and groups by id, remembering what it looked up
// for the span of one call (a listing names the same few many times).
type idNames struct{ users, groups map[uint32]string }

func newIDNames() *idNames {
	return &idNames{users: map[uint32]string{}, groups: map[uint32]string{}}
}

// user is the name of the account uid, or uid itself.
func (n *idNames) user(uid uint32) string {
	if name, ok := n.users[uid]; ok {
		return name
	}
	name := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	n.users[uid] = name
	return name
}

// group is the name of the group gid, or gid itself.
func (n *idNames) group(gid uint32) string {
	if name, ok := n.groups[gid]; ok {
		return name
	}
	name := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(name); err == nil {
		name = g.Name
	}
	n.groups[gid] = name
	return name
}

func (f *envdFilesystem) Stat(ctx context.Context, req *connect.Request[fspb.StatRequest]) (*connect.Response[fspb.StatResponse], error) {
	u, path, err := f.s.envdTarget(req.Header(), req.Msg.Path)
	if err != nil {
		return nil, err
	}
	e, err := asCaller(u, func() (*fspb.EntryInfo, error) { return envdEntry(path) })
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fspb.StatResponse{Entry: e}), nil
}

func (f *envdFilesystem) ListDir(ctx context.Context, req *connect.Request[fspb.ListDirRequest]) (*connect.Response[fspb.ListDirResponse], error) {
	u, path, err := f.s.envdTarget(req.Header(), req.Msg.Path)
	if err != nil {
		return nil, err
	}
	depth := max(int(req.Msg.Depth), 1)
	entries, err := asCaller(u, func() ([]*fspb.EntryInfo, error) { return listDir(ctx, path, depth) })
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fspb.ListDirResponse{Entries: entries}), nil
}

// listDir lists the entries under the directory at path (through links),
// depth levels down, as paths under path. A subdirectory that cannot be
// read is listed without its contents.
func listDir(ctx context.Context, path string, depth int) ([]*fspb.EntryInfo, error) {
	root, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fsError("list", path, err)
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fsError("list", path, err)
	}
	if !fi.IsDir() {
		return nil, errInvalid("not_a_directory", "path is not a directory: %s", path)
	}
	entries := []*fspb.EntryInfo{}
	names := newIDNames()
	size := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if p == root {
			if err != nil {
				return fsError("list", path, err)
			}
			return nil
		}
		if err != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // gone meanwhile
		}
		rel, _ := filepath.Rel(root, p)
		e := envdEntryOf(p, info, names)
		e.Path = filepath.Join(path, rel)
		if size += proto.Size(e); size > maxListBytes {
			return &rpcError{kind: kindResourceExhausted, reason: "listing_too_large", subject: path,
				msg: fmt.Sprintf("the listing of %s is larger than %d MiB: list fewer levels or a smaller directory", path, maxListBytes>>20)}
		}
		entries = append(entries, e)
		if d.IsDir() && strings.Count(rel, "/")+1 >= depth {
			return fs.SkipDir
		}
		return nil
	})
	return entries, err
}

func (f *envdFilesystem) MakeDir(ctx context.Context, req *connect.Request[fspb.MakeDirRequest]) (*connect.Response[fspb.MakeDirResponse], error) {
	u, path, err := f.s.envdTarget(req.Header(), req.Msg.Path)
	if err != nil {
		return nil, err
	}
	e, err := asCaller(u, func() (*fspb.EntryInfo, error) {
		fi, err := os.Stat(path)
		switch {
		case err == nil && fi.IsDir():
			return nil, &rpcError{kind: kindExists, reason: "directory_exists", subject: path, msg: "directory already exists: " + path}
		case err == nil:
			return nil, errInvalid("not_a_directory", "path already exists but it is not a directory: %s", path)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fsError("mkdir", path, err)
		}
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, fsError("mkdir", path, err)
		}
		return envdEntry(path)
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fspb.MakeDirResponse{Entry: e}), nil
}

func (f *envdFilesystem) Move(ctx context.Context, req *connect.Request[fspb.MoveRequest]) (*connect.Response[fspb.MoveResponse], error) {
	u, from, err := f.s.envdTarget(req.Header(), req.Msg.Source)
	if err != nil {
		return nil, err
	}
	to, err := envdPath(req.Msg.Destination, u)
	if err != nil {
		return nil, err
	}
	e, err := asCaller(u, func() (*fspb.EntryInfo, error) {
		if _, err := os.Lstat(from); err != nil {
			return nil, fsError("move", from, err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return nil, fsError("mkdir", filepath.Dir(to), err)
		}
		if err := os.Rename(from, to); err != nil {
			return nil, fsError("move", from, err)
		}
		return envdEntry(to)
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fspb.MoveResponse{Entry: e}), nil
}

func (f *envdFilesystem) Remove(ctx context.Context, req *connect.Request[fspb.RemoveRequest]) (*connect.Response[fspb.RemoveResponse], error) {
	u, path, err := f.s.envdTarget(req.Header(), req.Msg.Path)
	if err != nil {
		return nil, err
	}
	if path == "/" {
		return nil, errInvalid("invalid_path", "refusing to remove /")
	}
	err = asUser(u, func() error {
		if err := os.RemoveAll(path); err != nil {
			return fsError("remove", path, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fspb.RemoveResponse{}), nil
}
