package shim

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
)

// uploadReader reads the data of an UploadTar stream.
type uploadReader struct {
	stream *connect.ClientStream[agentpb.UploadTarRequest]
	buf    []byte
}

func (r *uploadReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if !r.stream.Receive() {
			if err := r.stream.Err(); err != nil {
				return 0, err
			}
			return 0, io.EOF
		}
		if r.stream.Msg().GetHeader() != nil {
			return 0, errInvalid("duplicate_header", "only the first message may be a header")
		}
		r.buf = r.stream.Msg().GetData()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (h *fileService) UploadTar(ctx context.Context, stream *connect.ClientStream[agentpb.UploadTarRequest]) (*connect.Response[agentpb.UploadTarResponse], error) {
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
	dir, err := cleanPath(hdr.Dir)
	if err != nil {
		return nil, err
	}
	if hdr.CreateDir {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fsError("mkdir", dir, err)
		}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fsError("upload", dir, err)
	}
	if !fi.IsDir() {
		return nil, errPrecondition("not_a_directory", dir, "%s is not a directory", dir)
	}
	x := &extractor{dir: dir, buf: make([]byte, chunkSize)}
	if err := x.extract(tar.NewReader(&uploadReader{stream: stream})); err != nil {
		x.undo()
		return nil, err
	}
	x.commit()
	return connect.NewResponse(&agentpb.UploadTarResponse{Entries: x.entries, Bytes: x.bytes}), nil
}

// extractor writes a tar's entries under dir and nowhere else. An upload is
// all or nothing: what it created is recorded, and what it replaced is kept
// in a staging directory, so a failed upload removes the one and puts the
// other back.
type extractor struct {
	dir            string
	buf            []byte
	entries, bytes int64

	created  []string   // paths this upload created, in order
	replaced []replaced // entries it moved aside, in order
	chmods   []chmodded // existing directories whose mode it changed
	staging  string     // where replaced entries wait; "" until needed
}

type replaced struct{ path, kept string }

type chmodded struct {
	path string
	mode fs.FileMode
}

// undo removes what a failed upload created and restores what it replaced.
func (x *extractor) undo() {
	for _, c := range slices.Backward(x.chmods) {
		_ = os.Chmod(c.path, c.mode)
	}
	for _, p := range slices.Backward(x.created) {
		_ = os.Remove(p)
	}
	for _, r := range slices.Backward(x.replaced) {
		_ = os.Rename(r.kept, r.path)
	}
	if x.staging != "" {
		_ = os.RemoveAll(x.staging)
	}
}

// commit drops what a successful upload replaced.
func (x *extractor) commit() {
	if x.staging != "" {
		_ = os.RemoveAll(x.staging)
	}
}

func (x *extractor) extract(tr *tar.Reader) error {
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var re *rpcError
			var ce *connect.Error
			if errors.As(err, &re) || errors.As(err, &ce) {
				return err
			}
			return &rpcError{kind: kindInvalid, reason: "invalid_tar", msg: "the upload is not a valid tar stream", cause: err}
		}
		if err := x.entry(tr, h); err != nil {
			return err
		}
		x.entries++
	}
}

// target returns where a tar entry named name goes, refusing names that
// leave dir or pass through a symbolic link under it.
func (x *extractor) target(name string) (string, error) {
	outside := &rpcError{kind: kindInvalid, reason: "tar_path_outside_dir", subject: name,
		msg: fmt.Sprintf("tar entry %q would be written outside %s", name, x.dir)}
	if strings.IndexByte(name, 0) >= 0 || filepath.IsAbs(name) {
		return "", outside
	}
	rel := filepath.Clean(name)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", outside
	}
	if rel == "." {
		return x.dir, nil
	}
	// Every directory between dir and the entry must be a real directory.
	cur := x.dir
	parts := strings.Split(rel, "/")
	for _, part := range parts[:len(parts)-1] {
		cur = filepath.Join(cur, part)
		fi, made, err := x.dirAt(cur, 0o755)
		if err != nil {
			return "", err
		}
		if made {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			outside.msg = fmt.Sprintf("tar entry %q would be written through a symbolic link", name)
			return "", outside
		}
		if !fi.IsDir() {
			return "", errPrecondition("not_a_directory", cur, "%s is not a directory", cur)
		}
	}
	return filepath.Join(x.dir, rel), nil
}

// dirAt makes the directory path with mode, recording it as created, or,
// when something is there already, returns what it is. The workspace is
// live: whatever else writes to it (the runtime's capabilities being laid
// out, the sandbox's own processes) may make the same directory between
// the look and the mkdir, and then the mkdir's "exists" sends it to look
// again rather than failing the upload.
func (x *extractor) dirAt(path string, mode fs.FileMode) (fi fs.FileInfo, made bool, err error) {
	if fi, err = os.Lstat(path); err == nil {
		return fi, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fsError("upload", path, err)
	}
	if err = os.Mkdir(path, mode); err == nil {
		x.created = append(x.created, path)
		return nil, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, false, fsError("mkdir", path, err)
	}
	if fi, err = os.Lstat(path); err != nil {
		return nil, false, fsError("upload", path, err)
	}
	return fi, false, nil
}

// clearPath moves what is at path aside (into the staging directory, to be
// put back if the upload fails) unless it is a directory, so that a new
// entry never writes through an existing symbolic link. The path is then
// recorded as created.
func (x *extractor) clearPath(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fsError("upload", path, err)
	case fi.IsDir():
		return errPrecondition("is_a_directory", path, "%s is a directory", path)
	default:
		if x.staging == "" {
			if x.staging, err = os.MkdirTemp(x.dir, ".paddock-upload-"); err != nil {
				return fsError("upload", x.dir, err)
			}
		}
		kept := filepath.Join(x.staging, strconv.Itoa(len(x.replaced)))
		if err := os.Rename(path, kept); err != nil {
			return fsError("upload", path, err)
		}
		x.replaced = append(x.replaced, replaced{path: path, kept: kept})
	}
	x.created = append(x.created, path)
	return nil
}

// linkInside refuses a symbolic link at path whose target resolves outside
// dir: an absolute target elsewhere, a ".." that climbs out, or a way out
// through a link that already exists.
func (x *extractor) linkInside(name, path, target string) error {
	outside := &rpcError{kind: kindInvalid, reason: "tar_path_outside_dir", subject: name,
		msg: fmt.Sprintf("tar entry %q is a link to %q, outside %s", name, target, x.dir)}
	dest := target
	if !filepath.IsAbs(dest) {
		dest = filepath.Join(filepath.Dir(path), dest)
	}
	if !within(x.dir, filepath.Clean(dest)) {
		return outside
	}
	// Follow what exists of it: earlier links may lead elsewhere.
	root, err := filepath.EvalSymlinks(x.dir)
	if err != nil {
		return fsError("upload", x.dir, err)
	}
	resolved, rest := filepath.Clean(dest), ""
	for {
		if r, err := filepath.EvalSymlinks(resolved); err == nil {
			resolved = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(resolved)
		if parent == resolved {
			break
		}
		rest = filepath.Join(filepath.Base(resolved), rest)
		resolved = parent
	}
	if !within(root, resolved) {
		return outside
	}
	return nil
}

// within reports whether p is dir or below it.
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

func (x *extractor) entry(tr *tar.Reader, h *tar.Header) error {
	path, err := x.target(h.Name)
	if err != nil {
		return err
	}
	mode := h.FileInfo().Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	switch h.Typeflag {
	case tar.TypeDir:
		return x.makeDir(path, mode)
	case tar.TypeReg, tar.TypeRegA:
		return x.writeFile(tr, h, path, mode)
	case tar.TypeSymlink:
		if strings.IndexByte(h.Linkname, 0) >= 0 {
			return errInvalid("invalid_tar", "link target of %q contains a NUL byte", h.Name)
		}
		if err := x.linkInside(h.Name, path, h.Linkname); err != nil {
			return err
		}
		if err := x.clearPath(path); err != nil {
			return err
		}
		if err := os.Symlink(h.Linkname, path); err != nil {
			return fsError("symlink", path, err)
		}
	case tar.TypeLink:
		old, err := x.target(h.Linkname)
		if err != nil {
			return err
		}
		if err := x.clearPath(path); err != nil {
			return err
		}
		if err := os.Link(old, path); err != nil {
			return fsError("link", path, err)
		}
	case tar.TypeFifo:
		if err := x.clearPath(path); err != nil {
			return err
		}
		if err := syscall.Mkfifo(path, uint32(mode.Perm())); err != nil {
			return fsError("mkfifo", path, err)
		}
	default:
		// Devices, and extended headers the reader did not consume: skipped.
		return nil
	}
	return nil
}

// makeDir makes the directory path, or takes the one there (to restore its
// mode once the upload is in), and sets mode on it.
func (x *extractor) makeDir(path string, mode fs.FileMode) error {
	if path == x.dir {
		return nil
	}
	fi, made, err := x.dirAt(path, mode|0o700)
	switch {
	case err != nil:
		return err
	case made:
	case !fi.IsDir():
		return errPrecondition("not_a_directory", path, "%s exists and is not a directory", path)
	default:
		x.chmods = append(x.chmods, chmodded{path: path, mode: fi.Mode().Perm() | fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)})
	}
	if err := os.Chmod(path, mode); err != nil {
		return fsError("chmod", path, err)
	}
	return nil
}

// writeFile writes the regular file path from tr (h's entry), in place of
// whatever was there, with mode and h's modification time.
func (x *extractor) writeFile(tr *tar.Reader, h *tar.Header, path string, mode fs.FileMode) error {
	if err := x.clearPath(path); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fsError("create", path, err)
	}
	n, err := io.CopyBuffer(struct{ io.Writer }{f}, tr, x.buf)
	x.bytes += n
	if err != nil {
		_ = f.Close()
		var re *rpcError
		var ce *connect.Error
		if errors.As(err, &re) || errors.As(err, &ce) {
			return err
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return &rpcError{kind: kindInvalid, reason: "invalid_tar", subject: h.Name, msg: "the upload ended inside an entry", cause: err}
		}
		return fsError("write", path, err)
	}
	if err := f.Chmod(mode); err != nil {
		_ = f.Close()
		return fsError("chmod", path, err)
	}
	if err := f.Close(); err != nil {
		return fsError("write", path, err)
	}
	_ = os.Chtimes(path, h.ModTime, h.ModTime)
	return nil
}

// chunkWriter sends what is written to it as DownloadTar messages of up to
// chunkSize bytes.
type chunkWriter struct {
	stream *connect.ServerStream[agentpb.DownloadTarResponse]
	buf    []byte
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		c := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:len(w.buf)+c]
		p = p[c:]
		n += c
		if len(w.buf) == cap(w.buf) {
			if err := w.Flush(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

func (w *chunkWriter) Flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.stream.Send(&agentpb.DownloadTarResponse{Data: w.buf})
	w.buf = w.buf[:0]
	return err
}

// sendError marks an error from the stream itself (the client went away),
// which must not be reported as a file system error.
type sendError struct{ err error }

func (e sendError) Error() string { return e.err.Error() }
func (e sendError) Unwrap() error { return e.err }

type sendErrWriter struct{ w *chunkWriter }

func (s sendErrWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil {
		return n, sendError{err}
	}
	return n, nil
}

func (h *fileService) DownloadTar(ctx context.Context, req *connect.Request[agentpb.DownloadTarRequest], stream *connect.ServerStream[agentpb.DownloadTarResponse]) error {
	root, err := cleanPath(req.Msg.Path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return fsError("download", root, err)
	}
	cw := &chunkWriter{stream: stream, buf: make([]byte, 0, chunkSize)}
	tw := tar.NewWriter(sendErrWriter{cw})
	copyBuf := make([]byte, chunkSize)
	if !fi.IsDir() {
		if err := addTarEntry(tw, root, filepath.Base(root), fi, copyBuf); err != nil {
			return unwrapSend(err)
		}
	} else {
		err = filepath.WalkDir(root+"/", func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path != root+"/" && errors.Is(err, fs.ErrNotExist) {
					return nil // a directory removed meanwhile: a live tree changes as it is read
				}
				return fsError("download", path, err)
			}
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			rel := strings.TrimPrefix(path, root)
			rel = strings.TrimPrefix(rel, "/")
			if rel == "" {
				return nil
			}
			info, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile
			}
			if err != nil {
				return fsError("download", path, err)
			}
			return addTarEntry(tw, path, rel, info, copyBuf)
		})
		if err != nil {
			return unwrapSend(err)
		}
	}
	if err := tw.Close(); err != nil {
		return unwrapSend(err)
	}
	return cw.Flush()
}

func unwrapSend(err error) error {
	var se sendError
	if errors.As(err, &se) {
		return se.err
	}
	return err
}

// addTarEntry writes one file system object to tw under name. One
// removed since fi was read is left out, as if the walk had not seen it.
func addTarEntry(tw *tar.Writer, path, name string, fi fs.FileInfo, buf []byte) error {
	var link string
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		l, err := os.Readlink(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fsError("readlink", path, err)
		}
		link = l
	case fi.Mode().IsRegular(), fi.IsDir(), fi.Mode()&fs.ModeNamedPipe != 0:
	default:
		return nil // sockets and devices are left out
	}
	h, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return fsError("download", path, err)
	}
	h.Name = name
	if fi.IsDir() {
		h.Name += "/"
	}
	h.Uname, h.Gname = "", ""
	if !fi.Mode().IsRegular() {
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fsError("open", path, err)
	}
	defer f.Close()
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	n, err := io.CopyBuffer(tw, io.LimitReader(struct{ io.Reader }{f}, h.Size), buf)
	if err != nil {
		var se sendError
		if errors.As(err, &se) {
			return err
		}
		return fsError("read", path, err)
	}
	if n < h.Size {
		// The file shrank while it was read: pad, keeping the archive valid.
		if _, err := io.CopyBuffer(tw, io.LimitReader(zeroReader{}, h.Size-n), buf); err != nil {
			return err
		}
	}
	return nil
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
