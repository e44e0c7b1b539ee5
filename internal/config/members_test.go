package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMembers: members.direct_add is off unless the file or the
// environment turns it on; the invitation lifetime is read from both and
// bounded.
func TestMembers(t *testing.T) {
	if c := Default(); c.Members.DirectAdd || c.Members.InvitationTTL != 0 {
		t.Fatalf("default members settings: %+v", c.Members)
	}
	file := filepath.Join(t.TempDir(), "paddock.yaml")
	if err := os.WriteFile(file, []byte("members:\n  direct_add: true\n  invitation_ttl: 48h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Default()
	if err := c.LoadFile(file, true); err != nil {
		t.Fatal(err)
	}
	if !c.Members.DirectAdd || c.Members.InvitationTTL != 48*time.Hour {
		t.Fatalf("from the file: %+v", c.Members)
	}
	env := map[string]string{"PADDOCK_MEMBERS_DIRECT_ADD": "false", "PADDOCK_MEMBERS_INVITATION_TTL": "72h"}
	if err := c.LoadEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if c.Members.DirectAdd || c.Members.InvitationTTL != 72*time.Hour {
		t.Fatalf("the environment over the file: %+v", c.Members)
	}
	env = map[string]string{"PADDOCK_MEMBERS_DIRECT_ADD": "sometimes"}
	if err := c.LoadEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err == nil || !strings.Contains(err.Error(), "PADDOCK_MEMBERS_DIRECT_ADD") {
		t.Fatalf("a bad direct_add: %v", err)
	}
	for _, ttl := range []time.Duration{time.Second, 400 * 24 * time.Hour} {
		c := Default()
		c.Members.InvitationTTL = ttl
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "invitation ttl") {
			t.Errorf("invitation ttl %s: %v", ttl, err)
		}
	}
}
