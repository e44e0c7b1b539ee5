package shim

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"
)

// envd's HTTP API beside its Connect services: GET /health, and GET and
// POST /files, which download and upload whole files as the SDKs'
// files.read and files.write do. Errors answer envd's {"code", "message"}
// with envd's statuses, which the SDKs map to their error classes (400
// invalid argument, 401 authentication, 404 not found, 507 not enough
// space).

// envdHealth answers as envd does: 204, nothing cached.
func envdHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// filesError is envd's error body.
type filesError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// writeFilesError answers err as envd's /files does.
func (s *Server) writeFilesError(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := filesStatus(err)
	if code == http.StatusInternalServerError {
		s.log.Warn("files request failed", "method", r.Method, "err", err)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(filesError{Code: code, Message: msg})
}

// filesStatus maps err to an HTTP status and its public message.
func filesStatus(err error) (int, string) {
	var ce *connect.Error
	if errors.As(err, &ce) && ce.Code() == connect.CodeUnauthenticated {
		return http.StatusUnauthorized, ce.Message()
	}
	var re *rpcError
	if !errors.As(err, &re) {
		return http.StatusInternalServerError, "internal error"
	}
	switch re.kind {
	case kindInvalid, kindFailedPrecondition:
		return http.StatusBadRequest, re.msg
	case kindNotFound:
		return http.StatusNotFound, re.msg
	case kindPermission:
		return http.StatusForbidden, re.msg
	case kindExists:
		return http.StatusConflict, re.msg
	case kindResourceExhausted:
		return http.StatusInsufficientStorage, re.msg
	}
	return http.StatusInternalServerError, re.msg
}

// envdDownload serves GET /files?path=&username=: the file's bytes, with
// ranges and conditional requests, or gzip-encoded when the client
// accepts it (and asked for no range). The file streams from disk.
func (s *Server) envdDownload(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	u, err := s.envdCaller(r.Header, q.Get("username"))
	if err != nil {
		s.writeFilesError(w, r, err)
		return
	}
	path, err := envdPath(q.Get("path"), u)
	if err != nil {
		s.writeFilesError(w, r, err)
		return
	}
	f, err := asCaller(u, func() (*os.File, error) { return openDownload(path) })
	if err != nil {
		s.writeFilesError(w, r, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.writeFilesError(w, r, fsError("read", path, err))
		return
	}
	w.Header().Set("Vary", "Accept-Encoding")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": filepath.Base(path)}))
	if !acceptsGzip(r) {
		http.ServeContent(w, r, path, fi.ModTime(), f)
		return
	}
	ct := mime.TypeByExtension(filepath.Ext(path))
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Encoding", "gzip")
	gw := gzip.NewWriter(w)
	if _, err := io.Copy(gw, f); err != nil {
		s.log.Debug("download cut short", "path", path, "err", err)
		return
	}
	_ = gw.Close()
}

// openDownload opens the regular file at path for reading: a missing one
// is not found (404), a directory or a FIFO, socket or device invalid
// (400). The open does not block on a FIFO.
func openDownload(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errNotFound("file_not_found", path, "path '%s' does not exist", path)
	case err != nil:
		return nil, fsError("read", path, err)
	case fi.IsDir():
		return nil, errInvalid("is_a_directory", "path '%s' is a directory", path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fsError("read", path, err)
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, errInvalid("not_a_regular_file", "path '%s' is not a regular file", path)
	}
	return f, nil
}

// acceptsGzip reports whether a download should be gzip-encoded: the
// client accepts gzip (q > 0) and asked for no range or condition, which
// only the identity encoding serves.
func acceptsGzip(r *http.Request) bool {
	for _, h := range []string{"Range", "If-Range", "If-Modified-Since", "If-None-Match"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// uploaded is envd's answer for one file written.
type uploaded struct {
	Path     string            `json:"path"`
	Name     string            `json:"name"`
	Type     string            `json:"type"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// uploadedAt describes the file an upload wrote at path, as u sees it.
func uploadedAt(u sandboxUser, path string) uploaded {
	md, _ := asCaller(u, func() (map[string]string, error) { return fileMetadata(path), nil })
	return uploaded{Path: path, Name: filepath.Base(path), Type: "file", Metadata: md}
}

// envdUpload serves POST /files?path=&username=: a multipart form whose
// "file" parts are written to path (when given) or each to its part's
// filename (a path, relative to the user's home or absolute), or an
// application/octet-stream body written to path. The body may be gzip
// (Content-Encoding). Each file streams to disk; its parents are created.
// It answers the files written.
func (s *Server) envdUpload(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	u, err := s.envdCaller(r.Header, q.Get("username"))
	if err != nil {
		s.writeFilesError(w, r, err)
		return
	}
	md, err := uploadMetadata(r.Header)
	if err != nil {
		s.writeFilesError(w, r, err)
		return
	}
	body, err := uploadBody(r)
	if err != nil {
		s.writeFilesError(w, r, err)
		return
	}
	defer body.Close()
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var out []uploaded
	switch {
	case mediaType == "application/octet-stream":
		out, err = uploadRaw(u, q.Get("path"), q.Has("path"), body, md)
	case strings.HasPrefix(mediaType, "multipart/") && params["boundary"] != "":
		out, err = uploadParts(u, q.Get("path"), q.Has("path"), multipart.NewReader(body, params["boundary"]), md)
	default:
		err = errInvalid("unsupported_content_type", "unsupported content type: %q, expected multipart/form-data or application/octet-stream", r.Header.Get("Content-Type"))
	}
	if err != nil {
		s.writeFilesError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// uploadBody is r's body, decoded per its Content-Encoding.
func uploadBody(r *http.Request) (io.ReadCloser, error) {
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return r.Body, nil
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, errInvalid("invalid_body", "error decompressing request body: not gzip")
		}
		return zr, nil
	default:
		return nil, errInvalid("unsupported_encoding", "unsupported Content-Encoding: %s, supported: [gzip]", enc)
	}
}

// uploadRaw writes an octet-stream body to path.
func uploadRaw(u sandboxUser, p string, hasPath bool, body io.Reader, md map[string]string) ([]uploaded, error) {
	if !hasPath {
		return nil, errInvalid("missing_path", "path query parameter is required for raw body upload")
	}
	path, err := envdPath(p, u)
	if err != nil {
		return nil, err
	}
	if err := writeUpload(u, path, body, md); err != nil {
		return nil, err
	}
	return []uploaded{uploadedAt(u, path)}, nil
}

// uploadParts writes a form's "file" parts, each with metadata md; a
// second part for the same path is refused (the first stays written, as
// envd does).
func uploadParts(u sandboxUser, p string, hasPath bool, mr *multipart.Reader, md map[string]string) ([]uploaded, error) {
	out := []uploaded{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, errInvalid("invalid_body", "error reading the multipart form: %v", err)
		}
		if part.FormName() != "file" {
			_ = part.Close()
			continue
		}
		target := p
		if !hasPath {
			// The filename is a path: envd reads it whole, not its base.
			_, params, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
			name, ok := params["filename"]
			if !ok {
				return nil, errInvalid("missing_path", "a file part names no filename and the request no path")
			}
			target = name
		}
		path, err := envdPath(target, u)
		if err != nil {
			return nil, err
		}
		for _, prev := range out {
			if prev.Path == path {
				return nil, errInvalid("duplicate_path", "you cannot upload multiple files to the same path '%s' in one upload request, only the first specified file was uploaded", path)
			}
		}
		err = writeUpload(u, path, part, md)
		_ = part.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, uploadedAt(u, path))
	}
}

// writeUpload writes src to path as u, with metadata md, as envd does: it
// creates path's parents and writes the file in place, so that a watcher
// sees the file created and written (an existing one keeps its mode and
// owner). A file the upload created is removed if the upload fails, as u
// and only while it is still the file created (see upload.discard).
func writeUpload(u sandboxUser, path string, src io.Reader, md map[string]string) error {
	var up *upload
	err := asUser(u, func() (err error) {
		up, err = openUpload(path)
		return err
	})
	if err != nil {
		return err
	}
	defer up.closeDir()
	f := up.f
	dst := &uploadWriter{f: f}
	_, err = io.CopyBuffer(dst, src, make([]byte, 256<<10))
	var mdErr error
	if err == nil {
		mdErr = setMetadata(f, md)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err, dst.err = cerr, cerr
	}
	if err == nil && mdErr == nil {
		return nil
	}
	if up.created {
		_ = asUser(u, up.discard)
	}
	if errors.Is(mdErr, unix.ENOTSUP) {
		return errPrecondition("metadata_unsupported", path, "the file system of %s cannot hold metadata", path)
	}
	if mdErr != nil {
		return fsError("set metadata of", path, mdErr)
	}
	if dst.err != nil {
		return fsError("write", path, dst.err)
	}
	return errInvalid("invalid_body", "reading the upload of %s: %v", path, err)
}

// upload is a file opened for an upload: the file, its parent directory
// (an O_PATH descriptor, held so that the file is removed from the
// directory it was created in, whatever its path names by then), its
// name there and its identity, and whether the upload created it.
type upload struct {
	f        *os.File
	dir      int
	base     string
	dev, ino uint64
	created  bool
}

// closeDir closes the parent directory's descriptor.
func (up *upload) closeDir() { _ = unix.Close(up.dir) }

// discard removes the file the upload created, unless its name in the
// parent directory now holds another file.
func (up *upload) discard() error {
	var st unix.Stat_t
	if err := unix.Fstatat(up.dir, up.base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if st.Dev != up.dev || st.Ino != up.ino {
		return unix.ESTALE
	}
	return unix.Unlinkat(up.dir, up.base, 0)
}

// openUpload creates path's parents and opens the file at path for
// writing, truncated, creating it (0666 less the umask) if need be; it
// reports whether it did. Only a regular file is written.
func openUpload(path string) (*upload, error) {
	dir, base := filepath.Split(path)
	if base == "" {
		return nil, errInvalid("is_a_directory", "path is a directory: %s", path)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fsError("mkdir", dir, err)
	}
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fsError("mkdir", dir, err)
	}
	up, err := openUploadAt(dfd, path, base)
	if err != nil {
		_ = unix.Close(dfd)
		return nil, err
	}
	return up, nil
}

// openUploadAt opens base in the directory dfd (path, for errors) as
// openUpload does.
func openUploadAt(dfd int, path, base string) (*upload, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dfd, base, &st, 0)
	switch {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return nil, errInvalid("is_a_directory", "path is a directory: %s", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, fsError("write", path, err)
	}
	created := err != nil
	// O_NONBLOCK: opening a FIFO fails at once rather than waiting for a
	// reader.
	fd, err := unix.Openat(dfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return nil, fsError("write", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		_ = f.Close()
		return nil, errInvalid("not_a_regular_file", "path is not a regular file: %s", path)
	}
	return &upload{f: f, dir: dfd, base: base, dev: st.Dev, ino: st.Ino, created: created}, nil
}

// uploadWriter writes to f and keeps its error apart from the source's.
// It hides f's ReadFrom, so that a copy into it goes through the copy's
// buffer.
type uploadWriter struct {
	f   *os.File
	err error
}

func (w *uploadWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}
