package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/pkg/client"
)

// Bounds of the file tools: what one call moves.
const (
	defaultReadBytes = 256 << 10
	// MaxFileBytes is the most read_file returns and write_file writes in
	// one call.
	MaxFileBytes = 4 << 20
)

// Encodings of file contents.
const (
	encText   = "text"
	encBase64 = "base64"
)

// ReadFileInput reads (part of) a file.
type ReadFileInput struct {
	Target
	Path     string `json:"path" jsonschema:"an absolute path in the sandbox"`
	Encoding string `json:"encoding,omitempty" jsonschema:"text (UTF-8; the default) or base64"`
	Offset   int64  `json:"offset,omitempty" jsonschema:"the first byte to read; default 0"`
	Length   int64  `json:"length,omitempty" jsonschema:"bytes to read at most; default 262144, at most 16777216"`
}

// FileContent is what read_file read.
type FileContent struct {
	Path      string `json:"path"`
	Content   string `json:"content" jsonschema:"the bytes read, in encoding"`
	Encoding  string `json:"encoding" jsonschema:"text or base64"`
	Size      int64  `json:"size" jsonschema:"the whole file's size in bytes"`
	Truncated bool   `json:"truncated" jsonschema:"the file goes on past what was read: read again from offset + the bytes read"`
}

// WriteFileInput writes a whole file.
type WriteFileInput struct {
	Target
	Path     string `json:"path" jsonschema:"an absolute path in the sandbox"`
	Content  string `json:"content" jsonschema:"the file's new contents, in encoding"`
	Encoding string `json:"encoding,omitempty" jsonschema:"text (the default) or base64"`
	Mode     string `json:"mode,omitempty" jsonschema:"permission bits in octal such as 0755; default: the file's own, or 0644"`
}

// ListFilesInput lists a directory.
type ListFilesInput struct {
	Target
	Path       string `json:"path" jsonschema:"an absolute path of a directory in the sandbox"`
	Recursive  bool   `json:"recursive,omitempty" jsonschema:"list the whole tree under it"`
	MaxDepth   int    `json:"max_depth,omitempty" jsonschema:"with recursive, how deep at most; default: no limit"`
	MaxEntries int    `json:"max_entries,omitempty" jsonschema:"entries at most; default 1000"`
}

// File is one entry of a sandbox's filesystem.
type File struct {
	Path          string `json:"path"`
	Type          string `json:"type" jsonschema:"file, directory, symlink or other"`
	Size          int64  `json:"size"`
	Mode          string `json:"mode" jsonschema:"permission bits in octal"`
	ModifiedAt    string `json:"modified_at" jsonschema:"RFC 3339"`
	SymlinkTarget string `json:"symlink_target,omitempty"`
}

// FileList is a directory's listing.
type FileList struct {
	Files     []File `json:"files"`
	Truncated bool   `json:"truncated" jsonschema:"there were more than max_entries entries"`
}

func fileOut(f client.FileInfo) File {
	return File{Path: f.Path, Type: f.Type, Size: f.Size, Mode: "0" + strconv.FormatUint(uint64(f.Mode), 8),
		ModifiedAt: f.ModifiedAt.UTC().Format(time.RFC3339), SymlinkTarget: f.SymlinkTarget}
}

func checkEncoding(enc string) (string, error) {
	switch enc {
	case "", encText:
		return encText, nil
	case encBase64:
		return encBase64, nil
	}
	return "", errorf("invalid_encoding", "encoding must be %q or %q, not %q", encText, encBase64, enc)
}

func (t *tools) readFile(ctx context.Context, in ReadFileInput) (FileContent, error) {
	enc, err := checkEncoding(in.Encoding)
	if err != nil {
		return FileContent{}, err
	}
	n := in.Length
	switch {
	case n < 0 || n > MaxFileBytes:
		return FileContent{}, errorf("invalid_length", "length must be between 1 and %d", MaxFileBytes)
	case n == 0:
		n = defaultReadBytes
	}
	if in.Offset < 0 {
		return FileContent{}, errorf("invalid_offset", "offset must not be negative")
	}
	org, ws, id, err := t.runtime(ctx, in.Target)
	if err != nil {
		return FileContent{}, err
	}
	// One byte more than asked tells whether the file goes on.
	fr, err := t.c.ReadFileRange(ctx, org, ws, id, in.Path, in.Offset, n+1)
	if err != nil {
		return FileContent{}, err
	}
	defer fr.Close()
	b, err := io.ReadAll(io.LimitReader(fr, n+1))
	if err != nil {
		return FileContent{}, err
	}
	out := FileContent{Path: in.Path, Encoding: enc, Size: fr.Size, Truncated: int64(len(b)) > n}
	b = b[:min(int64(len(b)), n)]
	if enc == encText && out.Truncated {
		// A character the cut split is left for the next read.
		for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.Valid(b); i++ {
			b = b[:len(b)-1]
		}
	}
	if enc == encText && !utf8.Valid(b) {
		return FileContent{}, errorf("not_text", "%s is not UTF-8 text (read it with encoding base64)", in.Path)
	}
	out.Content = string(b)
	if enc == encBase64 {
		out.Content = base64.StdEncoding.EncodeToString(b)
	}
	return out, nil
}

func (t *tools) writeFile(ctx context.Context, in WriteFileInput) (File, error) {
	enc, err := checkEncoding(in.Encoding)
	if err != nil {
		return File{}, err
	}
	data := []byte(in.Content)
	if enc == encBase64 {
		if data, err = base64.StdEncoding.DecodeString(in.Content); err != nil {
			return File{}, errorf("invalid_content", "content is not base64: %v", err)
		}
	}
	if len(data) > MaxFileBytes {
		return File{}, errorf("file_too_large", "write_file writes at most %d bytes in one call", MaxFileBytes)
	}
	var mode uint64
	if in.Mode != "" {
		if mode, err = strconv.ParseUint(in.Mode, 8, 32); err != nil || mode == 0 || mode > 0o7777 {
			return File{}, errorf("invalid_mode", "mode %q is not permission bits in octal (such as 0644)", in.Mode)
		}
	}
	org, ws, id, err := t.runtime(ctx, in.Target)
	if err != nil {
		return File{}, err
	}
	f, err := t.c.WriteFile(ctx, org, ws, id, in.Path, bytes.NewReader(data), client.WriteFileOptions{Mode: uint32(mode)})
	if err != nil {
		return File{}, err
	}
	return fileOut(f), nil
}

func (t *tools) listFiles(ctx context.Context, in ListFilesInput) (FileList, error) {
	org, ws, id, err := t.runtime(ctx, in.Target)
	if err != nil {
		return FileList{}, err
	}
	l, err := t.c.ListFiles(ctx, org, ws, id, in.Path, client.ListFilesOptions{Recursive: in.Recursive, MaxDepth: in.MaxDepth, MaxEntries: in.MaxEntries})
	if err != nil {
		return FileList{}, err
	}
	out := FileList{Files: make([]File, 0, len(l.Items)), Truncated: l.Truncated}
	for _, f := range l.Items {
		out.Files = append(out.Files, fileOut(f))
	}
	return out, nil
}
