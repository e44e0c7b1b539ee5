package capability

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"
)

// ReadTar reads and validates a bundle from a tar archive, gzip-compressed
// or not. The bundle may be at the archive's root or inside exactly one
// top-level directory. Links, devices and other special entries, paths
// that escape the archive, more than maxBytes of file content (maxBytes <=
// 0: DefaultMaxBytes) or more than MaxFiles files are problems, reported
// in a *ValidationError like every problem with the bundle itself.
func ReadTar(r io.Reader, maxBytes int64) (*Bundle, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, archiveError(err)
		}
		defer zr.Close()
		r = zr
	} else {
		r = br
	}

	root := newValidator() // problems with entries, by their name in the archive
	files, err := readTarFiles(tar.NewReader(r), maxBytes, root)
	if err != nil {
		return nil, err
	}

	prefix := bundleRoot(files)
	v := newValidator()
	v.problems = root.problems
	for p, kind := range root.specials {
		if rel, ok := strings.CutPrefix(p, prefix); ok {
			v.specials[rel] = kind
		}
	}
	for _, f := range files {
		f.Path = strings.TrimPrefix(f.Path, prefix) // every file has it
		v.addFile(f)
	}
	return v.bundle()
}

// readTarFiles reads the regular files of tr, at most maxBytes of entries
// in all, and tells root of every other entry and every bad name.
func readTarFiles(tr *tar.Reader, maxBytes int64, root *validator) ([]File, error) {
	var (
		files   []File
		entries int
		total   int64
	)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, archiveError(err)
		}
		if entries++; entries > 2*MaxFiles {
			return nil, limitError("more than %d entries", 2*MaxFiles)
		}
		// Every entry's size counts, read or not: skipping one still
		// decompresses it.
		if total += max(hdr.Size, 0); total > maxBytes {
			return nil, limitError("more than %d bytes", maxBytes)
		}
		name, msg := entryName(hdr.Name)
		if msg != "" {
			root.add(hdr.Name, "%s", msg)
			continue
		}
		if !isBundleFile(hdr, name, root) {
			continue
		}
		if len(files) >= MaxFiles {
			return nil, limitError("more than %d files", MaxFiles)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, archiveError(err)
		}
		files = append(files, File{Path: name, Mode: normalMode(hdr.FileInfo().Mode()), Data: data})
	}
}

// isBundleFile reports whether hdr, named name, is a file of the bundle.
// Directories are not; root learns of every other kind of entry, and of a
// file at the bundle's root.
func isBundleFile(hdr *tar.Header, name string, root *validator) bool {
	switch hdr.Typeflag {
	case tar.TypeReg, tar.TypeRegA:
		if name == "." {
			root.add(hdr.Name, "a file cannot be the bundle's root")
			return false
		}
		return true
	case tar.TypeDir, tar.TypeXGlobalHeader:
	case tar.TypeSymlink:
		root.special(name, "symlink")
	case tar.TypeLink:
		root.special(name, "hard link")
	case tar.TypeChar, tar.TypeBlock:
		root.special(name, "device")
	case tar.TypeFifo:
		root.special(name, "FIFO")
	default:
		root.special(name, "special file") // sparse files, GNU extensions, ...
	}
	return false
}

// entryName cleans an archive entry's name ("./a//b" is "a/b") and says
// what is wrong with it, if anything.
func entryName(name string) (string, string) {
	if strings.HasPrefix(name, "/") {
		return "", "absolute paths are not allowed"
	}
	if strings.Contains(name, `\`) {
		return "", "file names must not contain backslashes"
	}
	for part := range strings.SplitSeq(name, "/") {
		if part == ".." {
			return "", "paths must not contain '..'"
		}
	}
	p := path.Clean(name)
	if p == "." {
		return ".", ""
	}
	if msg := badName(p); msg != "" {
		return "", msg
	}
	return p, ""
}

// bundleRoot is "" when the manifest is at the archive's root, or "dir/"
// when every file is inside one top-level directory that holds it.
func bundleRoot(files []File) string {
	top := ""
	for _, f := range files {
		if f.Path == ManifestName {
			return ""
		}
		dir, _, nested := strings.Cut(f.Path, "/")
		if !nested || (top != "" && dir != top) {
			return ""
		}
		top = dir
	}
	if top == "" {
		return ""
	}
	return top + "/"
}

func archiveError(err error) error {
	return &ValidationError{Problems: []Problem{{Message: "reading the archive: " + err.Error()}}}
}

func limitError(format string, args ...any) error {
	return &ValidationError{Problems: []Problem{{Message: fmt.Sprintf(format, args...)}}}
}

// Tar returns the bundle as a canonical tar.gz: regular files only, sorted
// by path, with zero times, uid and gid 0, no user or group names, and
// modes 0644 or 0755. Equal bundles give equal archives.
func (b *Bundle) Tar() []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(canonicalTar(b.Files)) // a bytes.Buffer does not fail
	zw.Close()
	return buf.Bytes()
}

// canonicalTar is the uncompressed tar stream of files, which are sorted.
// The digest is taken of it, not of the gzip stream, so that it does not
// depend on the compressor's version.
func canonicalTar(files []File) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     f.Path,
			Mode:     int64(f.Mode.Perm()),
			Size:     int64(len(f.Data)),
			ModTime:  time.Unix(0, 0),
		}
		// The writer picks USTAR when it can encode the header, PAX when
		// not (long or non-ASCII names), the same way every time. It fails
		// only on headers no format encodes, and these all encode.
		if err := tw.WriteHeader(hdr); err != nil {
			panic("capability: writing a tar header: " + err.Error())
		}
		tw.Write(f.Data) // a bytes.Buffer does not fail
	}
	tw.Close()
	return buf.Bytes()
}
