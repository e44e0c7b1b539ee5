package cli

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// outsideDockerfile is the name a Dockerfile outside the context
// directory takes in the context's tar.
const outsideDockerfile = ".paddock.Dockerfile"

// contextDockerfile is the Dockerfile's path in the context of dir: its
// path relative to dir, or outsideDockerfile when it lies outside.
func contextDockerfile(dir, dockerfile string) (string, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	absFile, err := filepath.Abs(dockerfile)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(absDir, absFile)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return outsideDockerfile, nil
	}
	return filepath.ToSlash(rel), nil
}

// writeContext writes the tar of dir to w, leaving out what dir's
// .dockerignore excludes (the Dockerfile and .dockerignore always go),
// with the Dockerfile at name in it.
func writeContext(w io.Writer, dir, dockerfile, name string) error {
	var patterns []string
	if f, err := os.Open(filepath.Join(dir, ".dockerignore")); err == nil {
		patterns, err = ignorefile.ReadAll(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("read .dockerignore: %w", err)
		}
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		return fmt.Errorf(".dockerignore: %w", err)
	}
	tw := tar.NewWriter(w)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != name && rel != ".dockerignore" {
			if skip, err := pm.MatchesOrParentMatches(rel); err != nil || skip {
				if err == nil && d.IsDir() && !pm.Exclusions() {
					return filepath.SkipDir
				}
				return err
			}
		}
		return addToTar(tw, path, rel, d)
	})
	if err != nil {
		return err
	}
	if name == outsideDockerfile {
		info, err := os.Lstat(dockerfile)
		if err != nil {
			return err
		}
		if err := addToTar(tw, dockerfile, name, fs.FileInfoToDirEntry(info)); err != nil {
			return err
		}
	}
	return tw.Close()
}

// addToTar adds path (a file, directory or symbolic link) to tw as name;
// other kinds of file are left out.
func addToTar(tw *tar.Writer, path, name string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	link := ""
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		if link, err = os.Readlink(path); err != nil {
			return err
		}
	case !info.Mode().IsRegular() && !info.IsDir():
		return nil
	}
	h, err := tar.FileInfoHeader(info, link)
	if err != nil {
		return err
	}
	h.Name, h.Uname, h.Gname = name, "", ""
	if info.IsDir() {
		h.Name += "/"
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(tw, f)
	return err
}
