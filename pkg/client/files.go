package client

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Paths are interpreted inside the sandbox and must be absolute; an empty,
// relative or NUL-containing path is an invalid argument with the code
// "invalid_path".

func fileQuery(p string) url.Values { return url.Values{"path": {p}} }

// FileReader streams a file's contents. Size and Mode describe the file
// as it was when it was opened.
type FileReader struct {
	io.ReadCloser
	Size       int64
	Mode       uint32
	ModifiedAt time.Time
}

// ReadFile opens a file of the runtime's sandbox for reading. Errors such
// as "file_not_found" or "is_a_directory" are returned here. The caller
// must Close the reader; a transfer that breaks midway is a read error,
// never a short file.
func (c *Client) ReadFile(ctx context.Context, org, ws, runtimeID, path string) (*FileReader, error) {
	return c.ReadFileRange(ctx, org, ws, runtimeID, path, 0, 0)
}

// ReadFileRange opens length bytes of a file from offset (length 0: to
// the end).
func (c *Client) ReadFileRange(ctx context.Context, org, ws, runtimeID, path string, offset, length int64) (*FileReader, error) {
	q := fileQuery(path)
	if offset != 0 {
		q.Set("offset", strconv.FormatInt(offset, 10))
	}
	if length != 0 {
		q.Set("length", strconv.FormatInt(length, 10))
	}
	resp, err := c.open(ctx, http.MethodGet, runtimeRoute(org, ws, runtimeID, "files"), q, nil, "", "application/octet-stream")
	if err != nil {
		return nil, err
	}
	fr := &FileReader{ReadCloser: resp.Body}
	fr.Size, _ = strconv.ParseInt(resp.Header.Get("X-Paddock-File-Size"), 10, 64)
	if m, err := strconv.ParseUint(resp.Header.Get("X-Paddock-File-Mode"), 8, 32); err == nil {
		fr.Mode = uint32(m)
	}
	fr.ModifiedAt, _ = http.ParseTime(resp.Header.Get("Last-Modified"))
	return fr, nil
}

// WriteFileOptions control WriteFile.
type WriteFileOptions struct {
	// Mode is the permission bits; 0 keeps an existing file's, or 0644.
	Mode uint32
	// NoCreateParents fails with "file_not_found" when the parent
	// directory is missing, instead of creating it.
	NoCreateParents bool
	// NoOverwrite fails with "file_exists" when the file exists.
	NoOverwrite bool
}

// WriteFile replaces a file of the runtime's sandbox with what r yields,
// streamed. The file is written beside its final name and renamed into
// place, so it changes whole or not at all.
func (c *Client) WriteFile(ctx context.Context, org, ws, runtimeID, path string, r io.Reader, opts WriteFileOptions) (FileInfo, error) {
	q := fileQuery(path)
	if opts.Mode != 0 {
		q.Set("mode", strconv.FormatUint(uint64(opts.Mode), 8))
	}
	if opts.NoCreateParents {
		q.Set("parents", "false")
	}
	if opts.NoOverwrite {
		q.Set("no_overwrite", "true")
	}
	return sendFor[FileInfo](ctx, c, http.MethodPut, runtimeRoute(org, ws, runtimeID, "files"), q, r, "application/octet-stream")
}

// DeleteFile removes a file or an empty directory; with recursive, a
// directory and everything under it.
func (c *Client) DeleteFile(ctx context.Context, org, ws, runtimeID, path string, recursive bool) error {
	q := fileQuery(path)
	if recursive {
		q.Set("recursive", "true")
	}
	return c.callDiscard(ctx, http.MethodDelete, runtimeRoute(org, ws, runtimeID, "files"), q, nil)
}

// StatFile describes a file, following a final symbolic link.
func (c *Client) StatFile(ctx context.Context, org, ws, runtimeID, path string) (FileInfo, error) {
	return call[FileInfo](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "files", "stat"), fileQuery(path), nil)
}

// ListFilesOptions bound a listing.
type ListFilesOptions struct {
	Recursive bool
	// MaxEntries is how many entries to return at most; 0 means 1000, the
	// most is 100000.
	MaxEntries int
	// MaxDepth limits a recursive listing; 0 means none.
	MaxDepth int
}

// ListFiles lists a directory of the runtime's sandbox.
func (c *Client) ListFiles(ctx context.Context, org, ws, runtimeID, path string, opts ListFilesOptions) (FileList, error) {
	q := fileQuery(path)
	if opts.Recursive {
		q.Set("recursive", "true")
	}
	if opts.MaxEntries != 0 {
		q.Set("max_entries", strconv.Itoa(opts.MaxEntries))
	}
	if opts.MaxDepth != 0 {
		q.Set("max_depth", strconv.Itoa(opts.MaxDepth))
	}
	return call[FileList](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "files", "list"), q, nil)
}

// Mkdir creates a directory of the runtime's sandbox.
func (c *Client) Mkdir(ctx context.Context, org, ws, runtimeID string, req MkdirRequest) (FileInfo, error) {
	return call[FileInfo](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "files", "mkdir"), nil, req)
}

// Rename moves a file or directory inside the sandbox (replacing the
// target unless req.NoOverwrite) and describes it at its new path.
func (c *Client) Rename(ctx context.Context, org, ws, runtimeID string, req RenameRequest) (FileInfo, error) {
	return call[FileInfo](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "files", "rename"), nil, req)
}

// DownloadTar streams a tar of path: a directory's contents with names
// relative to it, or one file under its base name. The caller must Close
// the reader.
func (c *Client) DownloadTar(ctx context.Context, org, ws, runtimeID, path string) (io.ReadCloser, error) {
	resp, err := c.open(ctx, http.MethodGet, runtimeRoute(org, ws, runtimeID, "files", "tar"), fileQuery(path), nil, "", "application/x-tar")
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// UploadTar extracts the tar stream r under the directory dir of the
// runtime's sandbox, creating it if missing. An entry that would land
// outside dir fails with "tar_path_outside_dir".
func (c *Client) UploadTar(ctx context.Context, org, ws, runtimeID, dir string, r io.Reader) (TarResult, error) {
	return sendFor[TarResult](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "files", "tar"), fileQuery(dir), r, "application/x-tar")
}
