package fake

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// ArchiveRepository is the repository of every snapshot reference:
// fake-archive:<n>, n counting up from 1 per provider.
const ArchiveRepository = "fake-archive"

// IsSnapshot reports whether ref names one of this provider's snapshots.
func (p *Provider) IsSnapshot(ref string) bool {
	return strings.HasPrefix(ref, ArchiveRepository+":")
}

// Codes on snapshot errors, the same as the Docker provider's.
const (
	CodeInvalidSnapshotRef = "invalid_snapshot_ref"
	CodeInvalidLabels      = "invalid_labels"
)

// Snapshot is what the fake records for one snapshot. The fake has no
// filesystem, so a snapshot is the compute's identity and state when it was
// taken.
type Snapshot struct {
	Ref       string
	Source    string            // handle id of the compute snapshotted
	SandboxID string            // its Spec.SandboxID
	Image     string            // its Spec.Image
	Labels    map[string]string // the compute's labels, under the ones given
	State     provider.State    // the compute's state when snapshotted
	CreatedAt time.Time
	// Tagged is false once RemoveSnapshot untagged a snapshot that compute
	// still uses: Create no longer accepts Ref, and the snapshot is kept
	// until RemoveSnapshot is called again with nothing using it, as the
	// Docker provider keeps its image.
	Tagged bool
}

type snapshot struct {
	Snapshot
	seq int64
}

// Snapshot records a snapshot of the compute h names, in any state, and
// returns its reference. The compute is left as it was; compute that does
// not exist is not found.
func (p *Provider) Snapshot(ctx context.Context, h provider.Handle, labels map[string]string) (string, error) {
	if p.cfg.NoSnapshot {
		return "", errdefs.NotImplemented(CodeSnapshotUnsupported, "provider %q cannot snapshot compute", p.Name())
	}
	var ref string
	err := p.update(ctx, OpSnapshot, h, func(c *compute) error {
		for k, v := range labels {
			if k == "" || strings.ContainsRune(k, 0) || strings.ContainsRune(v, 0) {
				return errdefs.InvalidArgument(CodeInvalidLabels, "label %q is not valid", k)
			}
		}
		l := maps.Clone(c.Labels)
		maps.Copy(l, labels)
		p.snapSeq++
		ref = ArchiveRepository + ":" + strconv.FormatInt(p.snapSeq, 10)
		p.snapshots[ref] = &snapshot{seq: p.snapSeq, Snapshot: Snapshot{
			Ref:       ref,
			Source:    c.Handle.ID,
			SandboxID: c.Spec.SandboxID,
			Image:     c.Spec.Image,
			Labels:    l,
			State:     c.Status.State,
			CreatedAt: p.cfg.Now(),
			Tagged:    true,
		}}
		return nil
	})
	if err != nil {
		return "", err
	}
	return ref, nil
}

// RemoveSnapshot deletes a snapshot. One that does not exist is not an
// error; one that compute was created from and still uses is untagged, not
// deleted (see Snapshot.Tagged). References outside ArchiveRepository are
// invalid arguments.
func (p *Provider) RemoveSnapshot(ctx context.Context, ref string) error {
	if err := p.enter(ctx, OpRemoveSnapshot); err != nil {
		return err
	}
	if !isArchiveRef(ref) {
		return errdefs.InvalidArgument(CodeInvalidSnapshotRef, "%q is not a snapshot reference", ref)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.snapshots[ref]
	if !ok {
		return nil
	}
	for _, c := range p.compute {
		if c.Spec.Image == ref {
			s.Tagged = false
			return nil
		}
	}
	delete(p.snapshots, ref)
	return nil
}

// Snapshots returns the snapshots that exist, untagged ones still in use
// included, oldest first.
func (p *Provider) Snapshots() []Snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	ss := slices.Collect(maps.Values(p.snapshots))
	slices.SortFunc(ss, func(a, b *snapshot) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]Snapshot, len(ss))
	for i, s := range ss {
		out[i] = s.Snapshot
		out[i].Labels = maps.Clone(s.Labels)
	}
	return out
}

// hasImage reports whether Create may use image: a tagged snapshot, or,
// outside ArchiveRepository, any image unless Config.Images lists the only
// ones that exist. The caller holds p.mu.
func (p *Provider) hasImage(image string) bool {
	if _, ok := strings.CutPrefix(image, ArchiveRepository+":"); ok {
		s, ok := p.snapshots[image]
		return ok && s.Tagged
	}
	return p.cfg.Images == nil || slices.Contains(p.cfg.Images, image)
}

// isArchiveRef reports whether ref is ArchiveRepository:<n> for a positive
// decimal n, the only form Snapshot returns.
func isArchiveRef(ref string) bool {
	n, ok := strings.CutPrefix(ref, ArchiveRepository+":")
	if !ok || n == "" || n[0] == '0' || len(n) > 19 {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Relabel sets labels over the compute's own, as a Pod's labels can be
// changed (provider.Relabeler): a claimed warm sandbox then names its
// runtime and org. Compute that does not exist is not found.
func (p *Provider) Relabel(ctx context.Context, h provider.Handle, labels map[string]string) error {
	return p.update(ctx, OpRelabel, h, func(c *compute) error {
		for k, v := range labels {
			if k == "" || strings.ContainsRune(k, 0) || strings.ContainsRune(v, 0) {
				return errdefs.InvalidArgument(CodeInvalidLabels, "label %q is not valid", k)
			}
		}
		c.Labels = maps.Clone(c.Labels)
		maps.Copy(c.Labels, labels)
		return nil
	})
}
