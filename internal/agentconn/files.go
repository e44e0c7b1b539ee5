package agentconn

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/errdefs"
)

// FileInfo describes a file in the sandbox. Mode carries Go's type bits
// (fs.ModeDir, fs.ModeSymlink, ...) as well as the permissions.
type FileInfo struct {
	Path          string
	Name          string
	Size          int64
	Mode          fs.FileMode
	ModTime       time.Time
	SymlinkTarget string
	UID, GID      uint32
}

// IsDir reports whether the file is a directory.
func (fi FileInfo) IsDir() bool { return fi.Mode.IsDir() }

func fileInfo(m *agentpb.FileInfo) FileInfo {
	if m == nil {
		return FileInfo{}
	}
	mode := agentpb.FileMode(m.Mode)
	switch m.Type {
	case agentpb.FileType_FILE_TYPE_DIRECTORY:
		mode |= fs.ModeDir
	case agentpb.FileType_FILE_TYPE_SYMLINK:
		mode |= fs.ModeSymlink
	case agentpb.FileType_FILE_TYPE_OTHER:
		mode |= fs.ModeIrregular
	}
	return FileInfo{
		Path:          m.Path,
		Name:          m.Name,
		Size:          m.Size,
		Mode:          mode,
		ModTime:       time.Unix(0, m.ModifiedAtUnixNano),
		SymlinkTarget: m.SymlinkTarget,
		UID:           m.Uid,
		GID:           m.Gid,
	}
}

// Stat describes path, following a final symbolic link.
func (c *Client) Stat(ctx context.Context, path string) (FileInfo, error) {
	return c.stat(ctx, path, true)
}

// Lstat describes path; a symbolic link is described, not followed.
func (c *Client) Lstat(ctx context.Context, path string) (FileInfo, error) {
	return c.stat(ctx, path, false)
}

func (c *Client) stat(ctx context.Context, path string, follow bool) (FileInfo, error) {
	res, err := c.files.Stat(ctx, connect.NewRequest(&agentpb.StatRequest{Path: path, FollowSymlinks: follow}))
	if err != nil {
		return FileInfo{}, mapError(err)
	}
	return fileInfo(res.Msg.Info), nil
}

// ListOptions bound a listing.
type ListOptions struct {
	Recursive bool
	// MaxEntries is how many entries to return at most; 0 means 1000, and
	// the agent caps it at 100000.
	MaxEntries int
	// MaxDepth limits a recursive listing to that many levels; 0 means none.
	MaxDepth int
}

// List lists a directory. truncated reports that more entries existed.
func (c *Client) List(ctx context.Context, path string, opts ListOptions) (entries []FileInfo, truncated bool, err error) {
	if opts.MaxEntries < 0 || opts.MaxDepth < 0 || opts.MaxEntries > 1<<30 || opts.MaxDepth > 1<<30 {
		return nil, false, errdefs.InvalidArgument("invalid_limit", "limits must be between 0 and 2^30")
	}
	res, err := c.files.List(ctx, connect.NewRequest(&agentpb.ListRequest{
		Path: path, Recursive: opts.Recursive, MaxEntries: int32(opts.MaxEntries), MaxDepth: int32(opts.MaxDepth),
	}))
	if err != nil {
		return nil, false, mapError(err)
	}
	entries = make([]FileInfo, 0, len(res.Msg.Entries))
	for _, e := range res.Msg.Entries {
		entries = append(entries, fileInfo(e))
	}
	return entries, res.Msg.Truncated, nil
}

// FileReader streams a file's contents from the agent.
type FileReader struct {
	info   FileInfo
	stream *connect.ServerStreamForClient[agentpb.ReadResponse]
	cancel context.CancelFunc
	buf    []byte
	err    error
}

var (
	_ io.ReadCloser = (*FileReader)(nil)
	_ io.WriterTo   = (*FileReader)(nil)
)

// ReadFile opens a file for reading. Errors such as "file_not_found" are
// returned here, not by the first Read. The caller must Close the reader.
func (c *Client) ReadFile(ctx context.Context, path string) (*FileReader, error) {
	return c.ReadFileRange(ctx, path, 0, 0)
}

// ReadFileRange opens length bytes of a file from offset (length 0: to the
// end).
func (c *Client) ReadFileRange(ctx context.Context, path string, offset, length int64) (*FileReader, error) {
	if offset < 0 || length < 0 {
		return nil, errdefs.InvalidArgument("invalid_range", "offset and length must not be negative")
	}
	sctx, cancel := context.WithCancel(ctx)
	stream, err := c.files.Read(sctx, connect.NewRequest(&agentpb.ReadRequest{Path: path, Offset: offset, Length: length}))
	if err != nil {
		cancel()
		return nil, mapError(err)
	}
	r := &FileReader{stream: stream, cancel: cancel}
	if !stream.Receive() {
		err := stream.Err()
		r.Close()
		if err == nil {
			return nil, protocolError("read ended before the file's description")
		}
		return nil, mapError(err)
	}
	info := stream.Msg().GetInfo()
	if info == nil {
		r.Close()
		return nil, protocolError("first read message is not the file's description")
	}
	r.info = fileInfo(info)
	return r, nil
}

// Info describes the file as it was when it was opened.
func (r *FileReader) Info() FileInfo { return r.info }

func (r *FileReader) Read(p []byte) (int, error) {
	if err := r.fill(); err != nil {
		return 0, err
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// WriteTo writes the rest of the file to w, each message's data as it
// comes, without copying it through the caller's buffer first (io.Copy
// calls it).
func (r *FileReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		if err := r.fill(); errors.Is(err, io.EOF) {
			return total, nil
		} else if err != nil {
			return total, err
		}
		n, err := w.Write(r.buf)
		total += int64(n)
		r.buf = r.buf[n:]
		if err != nil {
			return total, err
		}
	}
}

// fill receives messages until one carries data, or returns why none
// will (io.EOF at the file's end).
func (r *FileReader) fill() error {
	for len(r.buf) == 0 {
		if r.err != nil {
			return r.err
		}
		if !r.stream.Receive() {
			if err := r.stream.Err(); err != nil {
				r.err = mapError(err)
			} else {
				r.err = io.EOF
			}
			continue
		}
		r.buf = r.stream.Msg().GetData()
	}
	return nil
}

// Close ends the stream.
func (r *FileReader) Close() error {
	r.cancel()
	_ = r.stream.Close()
	if r.err == nil {
		r.err = errors.New("agentconn: read from closed file")
	}
	return nil
}

// WriteOptions control WriteFileWith.
type WriteOptions struct {
	// Mode is the file's permissions; 0 keeps an existing file's, or 0644.
	Mode fs.FileMode
	// CreateParents creates missing parent directories.
	CreateParents bool
	// NoOverwrite fails with "file_exists" if the file exists.
	NoOverwrite bool
}

// WriteFile replaces path with what r yields, creating missing parent
// directories. The agent writes a temporary file and renames it into place,
// so the file is replaced whole or not at all.
func (c *Client) WriteFile(ctx context.Context, path string, r io.Reader, mode fs.FileMode) (FileInfo, error) {
	return c.WriteFileWith(ctx, path, r, WriteOptions{Mode: mode, CreateParents: true})
}

// WriteFileWith is WriteFile with options.
//
// A file larger than one message goes by the agent's byte path
// (writeBytes), on a connection of its own; a smaller one, or any file to
// an agent without that path, by FileService.Write on the shared one.
func (c *Client) WriteFileWith(ctx context.Context, path string, r io.Reader, opts WriteOptions) (FileInfo, error) {
	hdr := &agentpb.WriteHeader{
		Path: path, Mode: agentpb.PermBits(opts.Mode), CreateParents: opts.CreateParents, NoOverwrite: opts.NoOverwrite,
	}
	var first []byte
	if r != nil && c.dialBytes != nil {
		first = make([]byte, chunkSize+1)
		n, err := fill(r, first)
		first = first[:n]
		switch {
		case err == nil:
			info, served, err := c.writeBytes(ctx, hdr, first, r)
			if served {
				return info, err
			}
		case errors.Is(err, io.EOF):
			r = nil // all of it is in first
		default:
			return FileInfo{}, err // nothing was sent
		}
	}
	return c.writeMessages(ctx, hdr, first, r)
}

// writeMessages writes first and then what r yields by FileService.Write.
func (c *Client) writeMessages(ctx context.Context, hdr *agentpb.WriteHeader, first []byte, r io.Reader) (FileInfo, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream := c.files.Write(sctx)
	err := stream.Send(&agentpb.WriteRequest{Msg: &agentpb.WriteRequest_Header{Header: hdr}})
	for len(first) > 0 && err == nil {
		n := min(len(first), chunkSize)
		err = stream.Send(&agentpb.WriteRequest{Msg: &agentpb.WriteRequest_Data{Data: first[:n]}})
		first = first[n:]
	}
	if err == nil {
		if rerr := sendChunks(r, func(b []byte) error {
			return stream.Send(&agentpb.WriteRequest{Msg: &agentpb.WriteRequest_Data{Data: b}})
		}); rerr != nil {
			// Abandon the call (the agent discards the partial file)
			// without closing its send side: a close
			// is the upload's clean end, which the agent could see
			// before the cancellation and commit what it had.
			cancel()
			return FileInfo{}, rerr
		}
	}
	res, err := stream.CloseAndReceive()
	if err != nil {
		return FileInfo{}, mapError(err)
	}
	return fileInfo(res.Msg.Info), nil
}

// sendChunks reads r in chunks and sends each. It returns r's error, or nil
// at EOF or when a send failed (the call's result then says why).
func sendChunks(r io.Reader, send func([]byte) error) error {
	if r == nil {
		return nil
	}
	buf := make([]byte, chunkSize)
	for {
		n, err := fill(r, buf)
		if n > 0 {
			if send(buf[:n]) != nil {
				return nil
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// fill reads r into buf until buf is full or r ends (io.EOF) or fails.
// Unlike io.ReadFull, it tells a source that ended (io.EOF) from one that
// failed, whatever its error.
func fill(r io.Reader, buf []byte) (n int, err error) {
	for n < len(buf) && err == nil {
		var m int
		m, err = r.Read(buf[n:])
		n += m
	}
	if n == len(buf) && errors.Is(err, io.EOF) {
		err = nil // the next read says it again
	}
	return n, err
}

// Mkdir creates a directory; mode 0 means 0755.
func (c *Client) Mkdir(ctx context.Context, path string, mode fs.FileMode) (FileInfo, error) {
	return c.mkdir(ctx, path, mode, false)
}

// MkdirAll creates a directory and any missing parents, and succeeds if it
// already exists (mkdir -p).
func (c *Client) MkdirAll(ctx context.Context, path string, mode fs.FileMode) (FileInfo, error) {
	return c.mkdir(ctx, path, mode, true)
}

func (c *Client) mkdir(ctx context.Context, path string, mode fs.FileMode, parents bool) (FileInfo, error) {
	res, err := c.files.Mkdir(ctx, connect.NewRequest(&agentpb.MkdirRequest{Path: path, Parents: parents, Mode: agentpb.PermBits(mode)}))
	if err != nil {
		return FileInfo{}, mapError(err)
	}
	return fileInfo(res.Msg.Info), nil
}

// Remove removes a file or an empty directory.
func (c *Client) Remove(ctx context.Context, path string) error {
	_, err := c.files.Remove(ctx, connect.NewRequest(&agentpb.RemoveRequest{Path: path}))
	return mapError(err)
}

// RemoveAll removes path and everything under it. Unlike os.RemoveAll, a
// missing path is an error ("file_not_found").
func (c *Client) RemoveAll(ctx context.Context, path string) error {
	_, err := c.files.Remove(ctx, connect.NewRequest(&agentpb.RemoveRequest{Path: path, Recursive: true}))
	return mapError(err)
}

// Rename renames from to to, replacing an existing file at to.
func (c *Client) Rename(ctx context.Context, from, to string) error {
	_, err := c.files.Rename(ctx, connect.NewRequest(&agentpb.RenameRequest{From: from, To: to}))
	return mapError(err)
}

// RenameNoReplace renames from to to, failing with "file_exists" if to
// exists.
func (c *Client) RenameNoReplace(ctx context.Context, from, to string) error {
	_, err := c.files.Rename(ctx, connect.NewRequest(&agentpb.RenameRequest{From: from, To: to, NoOverwrite: true}))
	return mapError(err)
}
