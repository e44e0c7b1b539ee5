package runtime

import (
	"testing"

	"github.com/paddockhq/paddock/internal/config"
)

// TestDefaultDefaultsFromConfig: the runtime defaults a server's config
// also sets are the config's defaults, not a copy of them.
func TestDefaultDefaultsFromConfig(t *testing.T) {
	c, d := config.Default(), DefaultDefaults
	if d.Image != c.DefaultImage || d.DiskMB != c.DiskMB || d.MaxDiskMB != c.MaxDiskMB || d.IdleTimeout != c.IdleTimeout ||
		d.MaxKeepalive != c.MaxKeepalive || d.ArchiveAfter != c.ArchiveAfter {
		t.Fatalf("runtime defaults %+v differ from the config's %+v", d, c)
	}
}
