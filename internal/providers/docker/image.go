package docker

import (
	"context"
	"maps"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

var (
	_ provider.ImageInspector = (*Provider)(nil)
	_ provider.ImageChecker   = (*Provider)(nil)
)

// CheckImage tells whether a sandbox could start on image: it is on the
// engine or, when the provider pulls missing images, its registry has it
// (asked, not pulled). An image the registry says it lacks, or will not
// show, is not found (image_not_found); a registry that cannot be asked
// (unreachable, slow, throttling) is unavailable
// (image_registry_unavailable).
func (p *Provider) CheckImage(ctx context.Context, image string) error {
	gen, ok := p.seen.has(image)
	if ok {
		return nil
	}
	_, err := p.cli.ImageInspect(ctx, image)
	if err == nil {
		p.seen.add(image, gen)
		return nil
	}
	if !cerrdefs.IsNotFound(err) {
		return engineErr("inspect the image", err)
	}
	if !p.pullable(image) {
		return errdefs.NotFound(CodeImageNotFound, "image %q is not on this engine", image).WithCause(err)
	}
	ctx, cancel := context.WithTimeout(ctx, registryCheckTimeout)
	defer cancel()
	_, err = p.cli.DistributionInspect(ctx, image, "")
	switch {
	case err == nil:
		return nil
	case registryLacks(err):
		return errdefs.NotFound(CodeImageNotFound, "image %q is not on this engine, and its registry does not offer it", image).WithCause(err)
	}
	return errdefs.Unavailable(CodeImageRegistryUnavailable, "image %q is not on this engine, and its registry could not be asked whether it has it; try again later", image).
		WithCause(err).WithRetryAfter(registryCheckTimeout)
}

// CodeImageRegistryUnavailable: an image is not on the engine and its
// registry could not be asked for it.
const CodeImageRegistryUnavailable = "image_registry_unavailable"

// registryCheckTimeout bounds asking a registry whether it has an image.
const registryCheckTimeout = 5 * time.Second

// registryLacks reports whether a registry's answer says it has no such
// image for us: unknown manifest or repository, or not ours to see.
func registryLacks(err error) bool {
	if cerrdefs.IsNotFound(err) || cerrdefs.IsUnauthorized(err) || cerrdefs.IsPermissionDenied(err) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "manifest unknown") || strings.Contains(msg, "name unknown") ||
		strings.Contains(msg, "repository does not exist") || strings.Contains(msg, "access to the resource is denied")
}

// pullable reports whether a missing image may be pulled: the provider
// pulls missing images, and ref is not a snapshot (one exists only here:
// pulling its name could fetch a stranger's image from a registry).
func (p *Provider) pullable(ref string) bool {
	return p.cfg.PullMissing && !strings.HasPrefix(ref, ArchiveRepository+":")
}

// ImageLabels are the labels of a local image (never pulled).
func (p *Provider) ImageLabels(ctx context.Context, image string) (map[string]string, error) {
	img, err := p.cli.ImageInspect(ctx, image)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, errdefs.NotFound(CodeImageNotFound, "image %q is not on this engine", image).WithCause(err)
		}
		return nil, engineErr("inspect the image", err)
	}
	out := map[string]string{}
	if img.Config != nil {
		maps.Copy(out, img.Config.Labels)
	}
	return out, nil
}

// seenImagesFor is how long CheckImage takes an image it found on the
// engine to be there still, without asking the engine again: creating a
// project, a template or a task checks its image, and the engine's answer
// (about 0.5 ms) was most of a project's creation. An image removed from
// the engine by other hands (or another replica) within that time is
// dealt with at the start instead, as one removed after the check always
// was: pulled when pulls are on, else refused (422 image_not_found,
// nothing left behind). What this process's providers remove from their
// engine is forgotten at once (engineSeen).
const seenImagesFor = 30 * time.Second

// engineSeen is, per engine this process reaches on its own host (its
// address), what CheckImage found there: the providers on one engine (runc
// and gVisor) share it, so that an image one of them removes is forgotten
// by all. Replicas, and providers of engines on other machines, each keep
// their own.
var engineSeen struct {
	mu sync.Mutex
	m  map[string]*seenImages
}

// seenImagesOn returns the images seen on the engine at host.
func seenImagesOn(host string) *seenImages {
	engineSeen.mu.Lock()
	defer engineSeen.mu.Unlock()
	if engineSeen.m == nil {
		engineSeen.m = map[string]*seenImages{}
	}
	s, ok := engineSeen.m[host]
	if !ok {
		s = &seenImages{ttl: seenImagesFor}
		engineSeen.m[host] = s
	}
	return s
}

// seenImages is what CheckImage found on the engine, and when.
type seenImages struct {
	mu  sync.Mutex
	at  map[string]time.Time
	gen uint64        // removals so far: what was inspected before one is not added
	ttl time.Duration // seenImagesFor; tests shorten it
}

// has reports whether image was seen lately, and the removals so far.
func (s *seenImages) has(image string) (gen uint64, ok bool) {
	if s == nil {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.at[image]
	return s.gen, ok && time.Since(at) < s.ttl
}

// add records image as seen by an inspection begun at gen, unless an
// image was removed since.
func (s *seenImages) add(image string, gen uint64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != gen {
		return
	}
	if s.at == nil {
		s.at = map[string]time.Time{}
	}
	s.at[image] = time.Now()
}

// forget drops everything seen: a removal by reference or id may take
// other names of the same image with it.
func (s *seenImages) forget() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	clear(s.at)
}
