package capability

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// SchemaVersion is the capability.yaml schema this package reads.
const SchemaVersion = 1

// ManifestName is the manifest's file name at the root of a bundle.
const ManifestName = "capability.yaml"

// Limits on a bundle, wherever it comes from.
const (
	// MaxFiles caps the number of files in a bundle.
	MaxFiles = 2000
	// DefaultMaxBytes caps the total size of a bundle's files when the
	// caller gives no limit of its own (Load, and ReadTar with maxBytes <= 0).
	DefaultMaxBytes = 64 << 20
	// maxManifestBytes caps capability.yaml and the markdown files whose
	// frontmatter is parsed.
	maxManifestBytes = 1 << 20
)

// Bundle is a validated capability: its manifest, resolved into typed
// fields, and every file it ships. Bundles returned by this package are
// shared; callers must not modify them.
type Bundle struct {
	Name        string
	Version     string
	Description string
	Agents      []Agent     // in manifest order
	Skills      []Skill     // in manifest order
	Tools       []Tool      // in manifest order
	MCPServers  []MCPServer // sorted by name
	Workers     []Worker    // in manifest order
	Setup       []Script    // in the order they run
	Checks      []Script    // in the order they run
	Flags       []Flag      // sorted by name
	Files       []File      // every file of the bundle, sorted by path
	// Digest is "sha256:<hex>" of the canonical tar (Tar before gzip), so
	// bundles with the same files have the same digest wherever they were
	// loaded from.
	Digest string
}

// Agent is an agent definition: a markdown file whose YAML frontmatter
// names and describes it and whose body is its system prompt.
type Agent struct {
	Name        string
	Description string
	Model       string   // empty: the harness's default
	Tools       []string // empty: every tool the harness offers
	Skills      []string
	Path        string // the markdown file, in the bundle
}

// Skill is a directory holding a SKILL.md and whatever files it refers to.
type Skill struct {
	Name        string
	Description string
	Dir         string // in the bundle
}

// Tool is an executable the bundle ships; it is put on PATH.
type Tool struct {
	Name        string
	Description string
	Path        string // in the bundle
}

// MCP server transports.
const (
	MCPStdio = "stdio"
	MCPHTTP  = "http"
)

// MCPServer is an MCP server definition. A stdio server has Command (and
// Args, Env); an http server has URL.
type MCPServer struct {
	Name    string
	Type    string // MCPStdio or MCPHTTP
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	// Flag, when set, names the flag that must be true for the server to
	// be configured.
	Flag string
}

// Worker is a long-running process started, by /bin/sh -c Run, when the
// bundle is applied to a sandbox.
type Worker struct {
	Name string
	Run  string
	Flag string // when set, the worker runs only while the flag is true
	Env  map[string]string
}

// Script is a setup step or a check: a shell command with a time limit.
type Script struct {
	Name    string
	Run     string
	Timeout time.Duration
}

// Flag is a boolean a binding sets to switch MCP servers and workers on or
// off.
type Flag struct {
	Name        string
	Description string
	Default     bool
}

// File is one file of a bundle. Mode is 0644, or 0755 for executables
// (any file with an execute bit, and every tool).
type File struct {
	Path string // slash-separated, relative to the bundle root
	Mode fs.FileMode
	Data []byte
}

// file returns the file at p.
func (b *Bundle) file(p string) (File, bool) {
	i, ok := slices.BinarySearchFunc(b.Files, p, func(f File, p string) int { return strings.Compare(f.Path, p) })
	if !ok {
		return File{}, false
	}
	return b.Files[i], true
}

// filesUnder returns the files in directory dir, with their paths relative
// to it.
func (b *Bundle) filesUnder(dir string) []File {
	var out []File
	for _, f := range b.Files {
		if rel, ok := strings.CutPrefix(f.Path, dir+"/"); ok {
			out = append(out, File{Path: rel, Mode: f.Mode, Data: f.Data})
		}
	}
	return out
}

// Problem is one thing wrong with a bundle: the file it is in (a path in
// the bundle, empty for the bundle as a whole) and what is wrong, starting
// with where in the file when that is known ("workers[1].run: required").
type Problem struct {
	Path    string
	Message string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// ValidationError is every problem found in a bundle.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "invalid capability: " + strings.Join(parts, "; ")
}

// Load reads and validates the bundle at the root of fsys (typically
// os.DirFS of its directory). Symlinks and special files are problems, and
// so are more than MaxFiles files or DefaultMaxBytes. Every problem found
// is returned in a *ValidationError.
func Load(fsys fs.FS) (*Bundle, error) {
	var (
		v     = newValidator()
		total int64
	)
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			v.add(p, "%v", unwrapPathError(err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == "." {
			return nil
		}
		if msg := badName(p); msg != "" {
			v.add(p, "%s", msg)
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			v.special(p, "symlink")
			return nil
		case !t.IsRegular():
			v.special(p, "special file")
			return nil
		}
		if len(v.files) >= MaxFiles {
			return errTooMany
		}
		info, err := d.Info()
		if err != nil {
			v.add(p, "%v", unwrapPathError(err))
			return nil
		}
		if total += info.Size(); total > DefaultMaxBytes {
			return errTooBig
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			v.add(p, "%v", unwrapPathError(err))
			return nil
		}
		v.addFile(File{Path: p, Mode: normalMode(info.Mode()), Data: data})
		return nil
	})
	switch {
	case errors.Is(err, errTooMany):
		return nil, limitError("more than %d files", MaxFiles)
	case errors.Is(err, errTooBig):
		return nil, limitError("more than %d bytes", DefaultMaxBytes)
	case err != nil:
		return nil, err
	}
	return v.bundle()
}

// Load's limits, as errors that stop the walk.
var (
	errTooMany = errors.New("too many files")
	errTooBig  = errors.New("too big")
)

// unwrapPathError drops the path from an fs error: the problem has it.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// normalMode is 0755 for a file with any execute bit, 0644 otherwise.
func normalMode(m fs.FileMode) fs.FileMode {
	if m.Perm()&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// badName says what is wrong with a file name in a bundle, if anything.
func badName(p string) string {
	if !fs.ValidPath(p) {
		return "not a valid path"
	}
	if !utf8.ValidString(p) || strings.ContainsFunc(p, unicode.IsControl) {
		return "file names must be printable UTF-8"
	}
	if strings.Contains(p, "\\") {
		return "file names must not contain backslashes"
	}
	return ""
}

// digest is the bundle's digest: the sha256 of its canonical tar.
func digest(files []File) string {
	sum := sha256.Sum256(canonicalTar(files))
	return "sha256:" + hex.EncodeToString(sum[:])
}
