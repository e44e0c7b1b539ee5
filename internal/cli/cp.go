package cli

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

// remoteRE matches RUNTIME:PATH.
var remoteRE = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9-]{0,62}):(.*)$`)

// remotePath splits RUNTIME:PATH; ok is false for a local path.
func remotePath(s string) (runtime, p string, ok bool, err error) {
	m := remoteRE.FindStringSubmatch(s)
	if m == nil {
		return "", "", false, nil
	}
	if !strings.HasPrefix(m[2], "/") {
		return "", "", true, usagef("%q: a path in a runtime's sandbox must be absolute (RUNTIME:/path)", s)
	}
	return m[1], m[2], true, nil
}

func (a *app) cpCmd() *cobra.Command {
	var sc scope
	cmd := &cobra.Command{
		Use:   "cp SRC DST",
		Short: "Copy files and directories between here and a runtime's sandbox",
		Long: `Copy a file or a directory between this machine and a running runtime's
sandbox. One of SRC and DST is RUNTIME:PATH, with an absolute PATH; RUNTIME is
a runtime id or the name of its project.

As with cp -r: when DST is an existing directory (or ends in /), SRC is
copied into it under its own name; otherwise DST becomes the copy.
Directories travel as a tar stream. "-" as SRC reads a file's contents from
standard input; as DST it writes a file's contents (or a directory's tar) to
standard output.`,
		Example: `  paddock cp ./src agent:/workspace/src
  paddock cp agent:/workspace/out.log .
  tar -c . | paddock exec -i agent -- tar -x -C /workspace`,
		Args: exactArgs("SRC", "DST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			srcRT, srcPath, srcRemote, err := remotePath(args[0])
			if err != nil {
				return err
			}
			dstRT, dstPath, dstRemote, err := remotePath(args[1])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			switch {
			case srcRemote && dstRemote:
				return usagef("copying between two sandboxes is not supported; copy through this machine")
			case srcRemote:
				t, err := a.target(ctx, &sc, srcRT)
				if err != nil {
					return err
				}
				return a.download(ctx, t, srcPath, args[1])
			case dstRemote:
				t, err := a.target(ctx, &sc, dstRT)
				if err != nil {
					return err
				}
				return a.upload(ctx, t, args[0], dstPath)
			}
			return usagef("one of SRC and DST must be RUNTIME:PATH")
		},
	}
	scopeFlags(cmd, &sc, true)
	return cmd
}

// upload copies the local src to dst in the sandbox.
func (a *app) upload(ctx context.Context, t target, src, dst string) error {
	if src == "-" {
		_, err := t.c.WriteFile(ctx, t.org, t.ws, t.rid, dst, a.env.Stdin, client.WriteFileOptions{})
		return err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	to := dst
	rfi, err := t.c.StatFile(ctx, t.org, t.ws, t.rid, dst)
	switch {
	case err == nil && rfi.IsDir(), err != nil && client.IsNotFound(err) && strings.HasSuffix(dst, "/"):
		to = path.Join(dst, filepath.Base(filepath.Clean(src)))
	case err != nil && !client.IsNotFound(err):
		return err
	}
	if !fi.IsDir() {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = t.c.WriteFile(ctx, t.org, t.ws, t.rid, to, f, client.WriteFileOptions{Mode: uint32(fi.Mode().Perm())})
		return err
	}
	pr, pw := io.Pipe()
	wrote := make(chan error, 1)
	go func() {
		err := writeTar(pw, src)
		_ = pw.CloseWithError(err)
		wrote <- err
	}()
	_, err = t.c.UploadTar(ctx, t.org, t.ws, t.rid, to, pr)
	_ = pr.CloseWithError(errors.New("upload ended")) // unblocks the writer
	if werr := <-wrote; err == nil && werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
		err = werr
	}
	return err
}

// download copies src in the sandbox to the local dst.
func (a *app) download(ctx context.Context, t target, src, dst string) error {
	fi, err := t.c.StatFile(ctx, t.org, t.ws, t.rid, src)
	if err != nil {
		return err
	}
	if dst == "-" {
		var rc io.ReadCloser
		if fi.IsDir() {
			rc, err = t.c.DownloadTar(ctx, t.org, t.ws, t.rid, src)
		} else {
			rc, err = t.c.ReadFile(ctx, t.org, t.ws, t.rid, src)
		}
		if err != nil {
			return err
		}
		defer rc.Close()
		_, err = io.Copy(a.env.Stdout, rc)
		return err
	}
	to := dst
	if lfi, err := os.Stat(dst); err == nil && lfi.IsDir() {
		to = filepath.Join(dst, path.Base(src))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := checkLocalDir(dst, to); err != nil {
		return err
	}
	if fi.IsDir() {
		rc, err := t.c.DownloadTar(ctx, t.org, t.ws, t.rid, src)
		if err != nil {
			return err
		}
		defer rc.Close()
		return extractTar(rc, to)
	}
	r, err := t.c.ReadFile(ctx, t.org, t.ws, t.rid, src)
	if err != nil {
		return err
	}
	defer r.Close()
	return writeLocalFile(to, r, fs.FileMode(fi.Mode&0o777))
}

// checkLocalDir refuses a local destination whose directory does not
// exist, naming the directory the user gave.
func checkLocalDir(dst, to string) error {
	dir := filepath.Dir(to)
	if strings.HasSuffix(dst, "/") || strings.HasSuffix(dst, string(filepath.Separator)) {
		dir = dst
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("local directory %s does not exist", dir)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// writeLocalFile writes r to name through a temporary file beside it, so
// that a failed copy leaves nothing half-written. Its errors name name,
// never the temporary file.
func writeLocalFile(name string, r io.Reader, mode fs.FileMode) (retErr error) {
	f, err := os.CreateTemp(filepath.Dir(name), ".paddock-cp-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", name, pathless(err))
	}
	defer func() {
		if retErr != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
			retErr = fmt.Errorf("cannot write %s: %w", name, pathless(retErr))
		}
	}()
	if _, err := io.Copy(f, r); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}

// writeTar writes a tar of the directory root's contents, names relative
// to it: directories, regular files and symbolic links.
func writeTar(w io.Writer, root string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		case !info.Mode().IsRegular() && !info.IsDir():
			return nil // sockets, devices, pipes stay behind
		}
		h, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if info.IsDir() {
			h.Name += "/"
		}
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, h.Size)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// extractTar writes a tar's entries under dir and nowhere else: names that
// leave dir, or pass through a symbolic link under it, are refused.
func extractTar(r io.Reader, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	type dirMode struct {
		path string
		mode fs.FileMode
	}
	var dirs []dirMode
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read the archive: %w", err)
		}
		p, err := extractPath(dir, h.Name)
		if err != nil {
			return err
		}
		mode := fs.FileMode(h.Mode) & fs.ModePerm
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			dirs = append(dirs, dirMode{p, mode})
		case tar.TypeReg:
			if err := replaceable(p); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := writeLocalFile(p, tr, mode); err != nil {
				return err
			}
			_ = os.Chtimes(p, h.ModTime, h.ModTime)
		case tar.TypeSymlink:
			if err := replaceable(p); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, p); err != nil {
				return err
			}
		case tar.TypeLink:
			old, err := extractPath(dir, h.Linkname)
			if err != nil {
				return err
			}
			if err := replaceable(p); err != nil {
				return err
			}
			if err := os.Link(old, p); err != nil {
				return err
			}
		}
	}
	// Modes last, deepest first, so a read-only directory is filled first.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i].path, dirs[i].mode); err != nil {
			return err
		}
	}
	return nil
}

// extractPath is where entry name goes under dir.
func extractPath(dir, name string) (string, error) {
	outside := fmt.Errorf("the archive's entry %q would be written outside %s", name, dir)
	rel := filepath.Clean(filepath.FromSlash(name))
	if strings.IndexByte(name, 0) >= 0 || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", outside
	}
	if rel == "." {
		return dir, nil
	}
	cur := dir
	for _, part := range strings.Split(filepath.Dir(rel), string(filepath.Separator)) {
		if part == "." {
			continue
		}
		cur = filepath.Join(cur, part)
		if fi, err := os.Lstat(cur); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", outside
		}
	}
	return filepath.Join(dir, rel), nil
}

// replaceable removes a symbolic link or file at p so that an entry can
// take its place without writing through a link; a directory stays.
func replaceable(p string) error {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory", p)
	}
	return os.Remove(p)
}

// pathless is err without the path of an *fs.PathError or *os.LinkError,
// which would name a temporary file.
func pathless(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}
