package docker

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
