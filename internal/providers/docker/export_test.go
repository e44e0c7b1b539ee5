package docker

import (
	"context"
	"log/slog"
	"time"
)

// SetAfterDiskMount makes f run in p's Create between mounting the
// workspace's disk and making the container.
func SetAfterDiskMount(p *Provider, f func()) { p.afterDiskMount = f }

// DiskUsers is how many calls hold or wait for volume's disk lock.
func DiskUsers(p *Provider, volume string) int {
	p.disks.mu.Lock()
	defer p.disks.mu.Unlock()
	if l := p.disks.m[volume]; l != nil {
		return l.users
	}
	return 0
}

// DiskProvider is a provider that only makes workspace disks, in dir.
func DiskProvider(dir string) *Provider {
	return &Provider{cfg: Config{DiskDir: dir}, logger: slog.New(slog.DiscardHandler)}
}

// MakeDisk makes and mounts volume's disk of sizeMB, as Create does.
func MakeDisk(ctx context.Context, p *Provider, volume string, sizeMB int64) error {
	return p.makeDisk(ctx, volume, sizeMB)
}

// RemoveDisk unmounts volume's disk and deletes its image.
func RemoveDisk(ctx context.Context, p *Provider, volume string) { p.removeDisk(ctx, volume) }

// OwnSeenImages gives p a memory of seen images of its own, not shared
// with the engine's other providers, taking an image to be there for d.
func OwnSeenImages(p *Provider, d time.Duration) { p.seen = &seenImages{ttl: d} }

// SetSeenImagesFor sets how long p's CheckImage takes an image it found
// to be there still.
func SetSeenImagesFor(p *Provider, d time.Duration) {
	p.seen.mu.Lock()
	defer p.seen.mu.Unlock()
	p.seen.ttl = d
}
