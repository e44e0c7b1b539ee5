package snapshot

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// copyOut freezes the sandbox's processes, streams its workspace as a
// gzipped tar to the destination under key, thaws them, and returns the
// artifact's size.
func (s *Service) copyOut(ctx context.Context, c *agentconn.Client, key string) (int64, error) {
	thaw, err := freeze(ctx, c)
	defer thaw()
	if err != nil {
		return 0, err
	}
	tr, err := c.DownloadTar(ctx, provider.WorkspacePath)
	if err != nil {
		return 0, err
	}
	defer tr.Close()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		zw := gzip.NewWriter(pw)
		_, err := io.Copy(zw, tr)
		if err == nil {
			err = zw.Close()
		}
		pw.CloseWithError(err)
	}()
	n, err := s.dest.Put(ctx, key, pr)
	pr.CloseWithError(errors.New("the destination stopped reading"))
	<-done
	if err != nil {
		return 0, destinationFailed(err)
	}
	return n, nil
}

// destinationFailed is a destination's failure as the caller sees it:
// public errors (the agent's) as they are, others as unavailable.
func destinationFailed(err error) error {
	if _, ok := errdefs.Public(err); ok {
		return err
	}
	return errdefs.Unavailable(CodeDestinationUnavailable, "the snapshot's destination failed; try again").WithCause(err)
}

// freeze stops every running process the agent runs (its process group)
// and returns what continues them, which the caller always calls. A
// process that ended meanwhile is passed over.
func freeze(ctx context.Context, c *agentconn.Client) (thaw func(), err error) {
	var stopped []string
	thaw = func() {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for _, id := range stopped {
			_ = c.Signal(tctx, id, syscall.SIGCONT, false)
		}
	}
	procs, err := c.Processes(ctx)
	if err != nil {
		return thaw, err
	}
	for _, p := range procs {
		if !p.Running {
			continue
		}
		if err := c.Signal(ctx, p.ID, syscall.SIGSTOP, false); err != nil && !errdefs.IsNotFound(err) {
			return thaw, err
		}
		stopped = append(stopped, p.ID)
	}
	return thaw, nil
}

// copyIn empties the sandbox's workspace and extracts snap's artifact
// into it.
func (s *Service) copyIn(ctx context.Context, c *agentconn.Client, snap store.Snapshot) error {
	d, err := s.destOf(snap)
	if err != nil {
		return err
	}
	r, err := d.Get(ctx, snap.Location)
	if err != nil {
		return destinationFailed(err)
	}
	defer r.Close()
	zr, err := gzip.NewReader(r)
	if err != nil {
		return errdefs.Unavailable("snapshot_artifact_corrupt", "the snapshot's artifact cannot be read").WithCause(err)
	}
	if err := emptyWorkspace(ctx, c); err != nil {
		return err
	}
	_, err = c.UploadTar(ctx, provider.WorkspacePath, withoutCapabilities(zr))
	return err
}

// capabilitiesDir is capability.Root relative to the workspace: the
// runtime's bound capabilities, which its bindings write again at every
// start (while a restore runs, too). They are the runtime's, not the
// snapshot's: a restore neither removes nor writes them.
var capabilitiesDir = strings.TrimPrefix(strings.TrimPrefix(capability.Root, provider.WorkspacePath), "/")

// underCapabilities reports whether name, a path relative to the
// workspace ("./" or not), is capabilitiesDir or under it.
func underCapabilities(name string) bool {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	return name == capabilitiesDir || strings.HasPrefix(name, capabilitiesDir+"/")
}

// withoutCapabilities is the tar stream r without its entries under
// capabilitiesDir.
func withoutCapabilities(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		tr, tw := tar.NewReader(r), tar.NewWriter(pw)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				pw.CloseWithError(tw.Close())
				return
			}
			if err == nil && !underCapabilities(h.Name) {
				if err = tw.WriteHeader(h); err == nil {
					_, err = io.Copy(tw, tr)
				}
			}
			if err != nil {
				pw.CloseWithError(errdefs.Unavailable("snapshot_artifact_corrupt", "the snapshot's artifact cannot be read").WithCause(err))
				return
			}
		}
	}()
	return pr
}

// emptyWorkspace removes everything under the workspace, leaving the
// directory.
func emptyWorkspace(ctx context.Context, c *agentconn.Client) error {
	for {
		entries, truncated, err := c.List(ctx, provider.WorkspacePath, agentconn.ListOptions{})
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := removeAllButCapabilities(ctx, c, e); err != nil {
				return err
			}
		}
		if !truncated {
			return nil
		}
	}
}

// removeAllButCapabilities removes e, or, for the directory that holds
// capabilitiesDir, everything in it but that.
func removeAllButCapabilities(ctx context.Context, c *agentconn.Client, e agentconn.FileInfo) error {
	rel := strings.TrimPrefix(strings.TrimPrefix(e.Path, provider.WorkspacePath), "/")
	switch {
	case underCapabilities(rel):
		return nil
	case e.IsDir() && strings.HasPrefix(capabilitiesDir, rel+"/"):
		entries, _, err := c.List(ctx, e.Path, agentconn.ListOptions{})
		if err != nil {
			return err
		}
		for _, in := range entries {
			if err := removeAllButCapabilities(ctx, c, in); err != nil {
				return err
			}
		}
		return nil
	}
	return c.RemoveAll(ctx, e.Path)
}
