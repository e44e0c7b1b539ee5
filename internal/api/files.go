package api

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"strconv"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/pkg/client"
)

// copyBufferSize is the buffer of a streamed file or tar copy.
const copyBufferSize = 256 << 10

// File headers of GET /files.
const (
	headerFileSize = "X-Paddock-File-Size"
	headerFileMode = "X-Paddock-File-Mode"
)

func fileOut(fi agentconn.FileInfo) client.FileInfo {
	typ := client.FileTypeFile
	switch {
	case fi.Mode.IsDir():
		typ = client.FileTypeDirectory
	case fi.Mode&fs.ModeSymlink != 0:
		typ = client.FileTypeSymlink
	case !fi.Mode.IsRegular():
		typ = client.FileTypeOther
	}
	return client.FileInfo{
		Path:          fi.Path,
		Name:          fi.Name,
		Type:          typ,
		Size:          fi.Size,
		Mode:          agentpb.PermBits(fi.Mode),
		ModifiedAt:    fi.ModTime.UTC(),
		SymlinkTarget: fi.SymlinkTarget,
		UID:           fi.UID,
		GID:           fi.GID,
	}
}

// modeParam reads an octal mode ("0644", "755"); "" is 0.
func modeParam(s string) (uint32, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o7777 {
		return 0, errdefs.InvalidArgument("invalid_mode", "mode %q must be octal permission bits from 0 to 7777", s)
	}
	return uint32(n), nil
}

// pathParam reads and checks ?path=.
func pathParam(r *http.Request) (string, error) {
	q := r.URL.Query()
	if len(q["path"]) > 1 {
		return "", errdefs.InvalidArgument("invalid_path", "give path once")
	}
	p := q.Get("path")
	return p, checkPath("path", p)
}

// streamBody copies src to w with one buffer; a failure after the status
// line aborts the response, so the client sees a broken transfer rather
// than a short one that looks complete.
func streamBody(w http.ResponseWriter, src io.Reader) {
	buf := make([]byte, copyBufferSize)
	if _, err := io.CopyBuffer(w, src, buf); err != nil {
		panic(http.ErrAbortHandler)
	}
}

// pathAgent reads ?path= and resolves the agent of the runtime.
func (a *API) pathAgent(r *http.Request) (string, *agentconn.Client, error) {
	p, err := pathParam(r)
	if err != nil {
		return "", nil, err
	}
	c, err := a.agentOf(r)
	return p, c, err
}

// readFile streams a file's contents (application/octet-stream), from
// ?offset= for ?length= bytes (0: to the end).
func (a *API) readFile(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, err := int64Param(q.Get("offset"), "offset")
	if err != nil {
		return err
	}
	length, err := int64Param(q.Get("length"), "length")
	if err != nil {
		return err
	}
	p, c, err := a.pathAgent(r)
	if err != nil {
		return err
	}
	fr, err := c.ReadFileRange(r.Context(), p, offset, length)
	if err != nil {
		return err
	}
	defer fr.Close()
	info := fr.Info()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set(headerFileSize, strconv.FormatInt(info.Size, 10))
	h.Set(headerFileMode, "0"+strconv.FormatUint(uint64(agentpb.PermBits(info.Mode)), 8))
	if !info.ModTime.IsZero() {
		h.Set("Last-Modified", info.ModTime.UTC().Format(http.TimeFormat))
	}
	w.WriteHeader(http.StatusOK)
	streamBody(w, fr)
	return nil
}

// writeFile replaces a file with the request body
// (application/octet-stream), written to a temporary file and renamed into
// place. Query: mode (octal), parents (default true), no_overwrite.
func (a *API) writeFile(w http.ResponseWriter, r *http.Request) error {
	if err := requireType(r, "application/octet-stream"); err != nil {
		return err
	}
	q := r.URL.Query()
	mode, err := modeParam(q.Get("mode"))
	if err != nil {
		return err
	}
	parents, err := boolParam(q.Get("parents"), "parents", true)
	if err != nil {
		return err
	}
	noOverwrite, err := boolParam(q.Get("no_overwrite"), "no_overwrite", false)
	if err != nil {
		return err
	}
	p, c, err := a.pathAgent(r)
	if err != nil {
		return err
	}
	fi, err := c.WriteFileWith(r.Context(), p, r.Body, agentconn.WriteOptions{Mode: agentpb.FileMode(mode), CreateParents: parents, NoOverwrite: noOverwrite})
	if err != nil {
		return bodyError(err)
	}
	writeJSON(w, http.StatusOK, fileOut(fi))
	return nil
}

// bodyError gives a failure to read the request body a public face.
func bodyError(err error) error {
	if _, ok := errdefs.Public(err); ok || errdefs.KindOf(err) != nil {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return errdefs.InvalidArgument("body_read_failed", "the request body could not be read to its end").WithCause(err)
}

// deleteFile removes a file or an empty directory; recursive=true removes
// a directory and everything under it.
func (a *API) deleteFile(w http.ResponseWriter, r *http.Request) error {
	recursive, err := boolParam(r.URL.Query().Get("recursive"), "recursive", false)
	if err != nil {
		return err
	}
	p, c, err := a.pathAgent(r)
	if err != nil {
		return err
	}
	remove := c.Remove
	if recursive {
		remove = c.RemoveAll
	}
	if err := remove(r.Context(), p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// statFile describes a file, following a final symbolic link unless
// no_follow=true.
func (a *API) statFile(w http.ResponseWriter, r *http.Request) error {
	noFollow, err := boolParam(r.URL.Query().Get("no_follow"), "no_follow", false)
	if err != nil {
		return err
	}
	p, c, err := a.pathAgent(r)
	if err != nil {
		return err
	}
	stat := c.Stat
	if noFollow {
		stat = c.Lstat
	}
	fi, err := stat(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, fileOut(fi))
	return nil
}

// boundedParam reads a non-negative integer query parameter of at most
// limit.
func boundedParam(r *http.Request, name string, limit int64) (int, error) {
	n, err := int64Param(r.URL.Query().Get(name), name)
	if err == nil && n > limit {
		err = errdefs.InvalidArgument("invalid_"+name, "%s must be at most %d", name, limit)
	}
	return int(n), err
}

// listFiles lists a directory: recursive, max_entries (default 1000, at
// most 100000), max_depth.
func (a *API) listFiles(w http.ResponseWriter, r *http.Request) error {
	recursive, err := boolParam(r.URL.Query().Get("recursive"), "recursive", false)
	if err != nil {
		return err
	}
	var opts agentconn.ListOptions
	if opts.MaxEntries, err = boundedParam(r, "max_entries", 100000); err != nil {
		return err
	}
	if opts.MaxDepth, err = boundedParam(r, "max_depth", 4096); err != nil {
		return err
	}
	opts.Recursive = recursive
	p, c, err := a.pathAgent(r)
	if err != nil {
		return err
	}
	entries, truncated, err := c.List(r.Context(), p, opts)
	if err != nil {
		return err
	}
	out := client.FileList{Items: make([]client.FileInfo, 0, len(entries)), Truncated: truncated}
	for _, e := range entries {
		out.Items = append(out.Items, fileOut(e))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *API) mkdir(w http.ResponseWriter, r *http.Request) error {
	var req client.MkdirRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	if err := checkPath("path", req.Path); err != nil {
		return err
	}
	if req.Mode > 0o7777 {
		return errdefs.InvalidArgument("invalid_mode", "mode must be permission bits from 0 to 07777")
	}
	c, err := a.agentOf(r)
	if err != nil {
		return err
	}
	mkdir := c.Mkdir
	if req.Parents {
		mkdir = c.MkdirAll
	}
	fi, err := mkdir(r.Context(), req.Path, agentpb.FileMode(req.Mode))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, fileOut(fi))
	return nil
}

// downloadTar streams a tar (application/x-tar) of a directory's contents,
// names relative to it, or of one file under its base name.
func (a *API) downloadTar(w http.ResponseWriter, r *http.Request) error {
	p, c, err := a.pathAgent(r)
	if err != nil {
		return err
	}
	tr, err := c.DownloadTar(r.Context(), p)
	if err != nil {
		return err
	}
	defer tr.Close()
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	streamBody(w, tr)
	return nil
}

// uploadTar extracts the request body (application/x-tar) under the
// directory ?path=, creating it if missing. Entries that would land outside
// it are refused.
func (a *API) uploadTar(w http.ResponseWriter, r *http.Request) error {
	if err := requireType(r, "application/x-tar"); err != nil {
		return err
	}
	p, c, err := a.pathAgent(r)
	if err != nil {
		return err
	}
	res, err := c.UploadTar(r.Context(), p, r.Body)
	if err != nil {
		return bodyError(err)
	}
	writeJSON(w, http.StatusOK, client.TarResult{Entries: res.Entries, Bytes: res.Bytes})
	return nil
}

// rename moves a file or directory inside the sandbox, replacing the
// target unless no_overwrite (then an existing target is 409 file_exists).
func (a *API) rename(w http.ResponseWriter, r *http.Request) error {
	var req client.RenameRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	if err := checkPath("from", req.From); err != nil {
		return err
	}
	if err := checkPath("to", req.To); err != nil {
		return err
	}
	c, err := a.agentOf(r)
	if err != nil {
		return err
	}
	rename := c.Rename
	if req.NoOverwrite {
		rename = c.RenameNoReplace
	}
	if err := rename(r.Context(), req.From, req.To); err != nil {
		return err
	}
	fi, err := c.Lstat(r.Context(), req.To)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, fileOut(fi))
	return nil
}
