package docker

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// A snapshot is an image committed from a sandbox's container and tagged
//
//	paddock/archive:<short sandbox id>-<unix nanoseconds>
//
// The short sandbox id (the first 12 characters of the container's
// LabelSandbox, else of the container id) says where it came from; the stamp
// is strictly increasing within a process, so every snapshot gets a tag of
// its own. RemoveSnapshot removes only references in ArchiveRepository, so a
// bug can never delete a user's image.
//
// The image holds the container's filesystem changes (its root is read-only,
// so these are little more than the mount points) and inherits the
// container's configuration: its labels, under the ones Snapshot is given,
// and its environment. The environment includes the values of Spec.Env —
// Docker records them in the image (Config and ContainerConfig) and the
// commit API cannot leave them out — so a snapshot is as sensitive as the
// sandbox, and a sandbox created from it inherits any variable its own spec
// does not set.
//
// An image still used by a container cannot be untagged by the engine
// without force (it answers conflict, "must force"), and a forced removal
// deletes the image record under a stopped container, after which that
// container can no longer be committed. RemoveSnapshot therefore never
// forces: it first names the image <tag>-kept, then untags the reference,
// which the engine does without conditions for an image with two names. A
// later RemoveSnapshot of the same reference removes the kept name once no
// container uses it.

// ArchiveRepository is the image repository every snapshot is tagged in.
const ArchiveRepository = "paddock/archive"

// IsSnapshot reports whether ref names an image in ArchiveRepository
// (under any tag, digest or registry-less spelling).
func (p *Provider) IsSnapshot(ref string) bool {
	repo := ref
	if i := strings.IndexAny(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	repo = strings.TrimPrefix(strings.TrimPrefix(repo, "docker.io/"), "library/")
	return repo == ArchiveRepository
}

// Codes this provider puts on snapshot errors.
const (
	CodeInvalidSnapshotRef = "invalid_snapshot_ref"
	CodeInvalidLabels      = "invalid_labels"
)

// keptSuffix names the tag that keeps an image in use after its reference
// was removed. Generated tags end in digits, so a kept tag never collides
// with one.
const keptSuffix = "-kept"

// maxTagLen is the longest tag RemoveSnapshot accepts: Docker's limit of
// 128, less room for keptSuffix.
const maxTagLen = 128 - len(keptSuffix)

var _ provider.Snapshotter = (*Provider)(nil)

// Snapshot commits the container to a new image in ArchiveRepository,
// labelled with labels over the container's own labels, and returns its
// reference. It works on running, paused and stopped sandboxes: the engine
// freezes a running container for the commit and thaws it after, and leaves
// a paused one paused (it pauses only a container that is not paused
// already), so the sandbox is left as it was. A container that is gone, or
// is not paddock's, is not found.
func (p *Provider) Snapshot(ctx context.Context, h provider.Handle, labels map[string]string) (_ string, retErr error) {
	if _, err := p.decodeHandle(h); err != nil {
		return "", err
	}
	for k, v := range labels {
		if k == "" || strings.ContainsRune(k, 0) || strings.ContainsRune(v, 0) {
			return "", errdefs.InvalidArgument(CodeInvalidLabels, "label %q is not valid", k)
		}
	}
	c, err := p.lookup(ctx, h.ID)
	if err != nil {
		return "", err
	}
	ref := snapshotRef(c, time.Now())
	defer func() {
		if retErr == nil {
			return
		}
		// The engine may have tagged the image before the call failed (or
		// the caller gave up); the tag is ours alone, so removing it is safe.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if err := p.removeRef(cctx, ref); err != nil {
			p.logger.WarnContext(cctx, "removing a snapshot after a failed commit", "ref", ref, "err", err)
		}
	}()
	// The engine merges the container's configuration, labels included,
	// under this one; labels given here win.
	_, err = p.cli.ContainerCommit(ctx, h.ID, container.CommitOptions{
		Reference: ref,
		Comment:   "paddock snapshot of sandbox " + c.Config.Labels[provider.LabelSandbox],
		Author:    "paddock",
		Pause:     true,
		Config:    &container.Config{Labels: maps.Clone(labels)},
	})
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return "", notFound(h.ID, err)
		}
		return "", engineErr("snapshot", err)
	}
	if err := ctx.Err(); err != nil { // the caller gave up; do not leave an image it does not know of
		return "", fmt.Errorf("snapshot: %w", err)
	}
	p.logger.DebugContext(ctx, "sandbox snapshotted", "container", h.ID, "ref", ref)
	return ref, nil
}

// RemoveSnapshot removes a snapshot's reference and, when no container uses
// the image, the image. A reference that does not exist is not an error. An
// image a container still uses is kept under <tag>-kept (see the top of this
// file) and the reference untagged; removing the same reference again, once
// the container is gone, removes the kept name and the image. Only
// references in ArchiveRepository are accepted; anything else is an invalid
// argument.
func (p *Provider) RemoveSnapshot(ctx context.Context, ref string) error {
	tag, ok := archiveTag(ref)
	if !ok {
		return errdefs.InvalidArgument(CodeInvalidSnapshotRef, "%q is not a snapshot reference", ref)
	}
	kept := ArchiveRepository + ":" + tag + keptSuffix
	err := p.removeRef(ctx, ref)
	switch {
	case err == nil:
		// Free the image an earlier removal kept, if nothing uses it now.
		if err := p.removeRef(ctx, kept); err != nil && !cerrdefs.IsConflict(err) {
			return engineErr("remove the snapshot of", err)
		}
		return nil
	case !cerrdefs.IsConflict(err):
		return engineErr("remove the snapshot of", err)
	}
	// A container uses the image and ref is its only name.
	if err := p.cli.ImageTag(ctx, ref, kept); err != nil {
		if cerrdefs.IsNotFound(err) { // removed meanwhile
			return nil
		}
		return engineErr("keep the snapshot of", err)
	}
	if err := p.removeRef(ctx, ref); err != nil {
		return engineErr("remove the snapshot of", err)
	}
	p.logger.DebugContext(ctx, "snapshot untagged; its image is in use", "ref", ref, "kept", kept)
	return nil
}

// removeRef removes an image reference without force, pruning untagged
// parents. A reference that does not exist is not an error. The engine
// deletes the image when ref was its last name and no container uses it,
// else it only untags ref; it answers conflict when ref is the only name of
// an image a container uses.
func (p *Provider) removeRef(ctx context.Context, ref string) error {
	err := p.removeImage(ctx, ref, image.RemoveOptions{PruneChildren: true})
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	return err
}

// snapshotRef returns a new reference for a snapshot of c.
func snapshotRef(c container.InspectResponse, now time.Time) string {
	id := c.Config.Labels[provider.LabelSandbox]
	if !validName(id, 128) {
		id = c.ID
	}
	return ArchiveRepository + ":" + shortID(id) + "-" + strconv.FormatInt(nextStamp(now), 10)
}

// lastStamp keeps snapshot stamps strictly increasing within the process,
// even when the wall clock stands still or steps back.
var lastStamp atomic.Int64

// nextStamp returns now in Unix nanoseconds, or one more than the last stamp
// if that is not later.
func nextStamp(now time.Time) int64 {
	for {
		last := lastStamp.Load()
		s := max(now.UnixNano(), last+1)
		if lastStamp.CompareAndSwap(last, s) {
			return s
		}
	}
}

// archiveTag returns the tag of ref if ref is ArchiveRepository:<tag> with a
// valid Docker tag ([A-Za-z0-9_][A-Za-z0-9_.-]*, here at most maxTagLen
// long). Digests and other repositories are refused.
func archiveTag(ref string) (string, bool) {
	tag, ok := strings.CutPrefix(ref, ArchiveRepository+":")
	if !ok || tag == "" || len(tag) > maxTagLen {
		return "", false
	}
	for i, c := range tag {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		case i > 0 && (c == '.' || c == '-'):
		default:
			return "", false
		}
	}
	return tag, true
}
