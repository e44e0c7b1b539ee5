package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSSHProviderFile reads an ssh provider's block from the file: its
// local paths made absolute, the machine's left as they are.
func TestSSHProviderFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	file := filepath.Join(dir, "paddock.yaml")
	if err := os.WriteFile(file, []byte(`
provider: gpu-box
providers:
  - name: docker
    kind: docker
  - name: gpu-box
    kind: ssh
    ssh:
      address: gpu.example.net:2222
      user: root
      key_file: keys/gpu
      known_hosts: keys/known_hosts
      docker_socket: /run/docker.sock
      run_dir: /run/pdk
      disk_dir: /srv/paddock/disks
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Default()
	if err := c.LoadFile(file, true); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("a valid ssh provider refused: %v", err)
	}
	if len(c.Providers) != 2 || c.Providers[1].Kind != KindSSH || c.Providers[1].SSH == nil {
		t.Fatalf("providers = %+v, want the second of kind ssh with its block", c.Providers)
	}
	want := SSHProvider{
		Address: "gpu.example.net:2222", User: "root",
		KeyFile: filepath.Join(dir, "keys/gpu"), KnownHosts: filepath.Join(dir, "keys/known_hosts"),
		DockerSocket: "/run/docker.sock", RunDir: "/run/pdk", DiskDir: "/srv/paddock/disks",
	}
	if got := *c.Providers[1].SSH; got != want {
		t.Fatalf("ssh block = %+v, want %+v", got, want)
	}
}

// TestSSHProviderValidate refuses an ssh block that names no machine, no
// key, no pinned host key or two, or relative paths on the machine, and
// the block on another kind.
func TestSSHProviderValidate(t *testing.T) {
	ok := func() *SSHProvider {
		return &SSHProvider{Address: "10.0.0.5", User: "root", KeyFile: "/k", HostKey: "ssh-ed25519 AAAA"}
	}
	valid := func(p ProviderConfig) error {
		c := Default()
		c.Provider, c.Providers = p.Name, []ProviderConfig{p}
		return c.validateProviders()
	}
	if err := valid(ProviderConfig{Name: "m", Kind: KindSSH, SSH: ok()}); err != nil {
		t.Fatalf("a valid ssh provider refused: %v", err)
	}
	bare := ok()
	bare.Mode = "bare"
	if err := valid(ProviderConfig{Name: "m", Kind: KindSSH, SSH: bare}); err != nil {
		t.Fatalf("a valid ssh provider in bare mode refused: %v", err)
	}
	for name, tc := range map[string]struct {
		edit func(*ProviderConfig)
		want string
	}{
		"no block":       {func(p *ProviderConfig) { p.SSH = nil }, "needs its ssh block"},
		"on docker":      {func(p *ProviderConfig) { p.Kind = "docker" }, "for ssh providers"},
		"no address":     {func(p *ProviderConfig) { p.SSH.Address = "" }, "address, user and key_file are required"},
		"no key":         {func(p *ProviderConfig) { p.SSH.KeyFile = "" }, "address, user and key_file are required"},
		"bad address":    {func(p *ProviderConfig) { p.SSH.Address = "a b:22" }, "is not host or host:port"},
		"nothing pinned": {func(p *ProviderConfig) { p.SSH.HostKey = "" }, "exactly one of host_key and known_hosts"},
		"both pinned":    {func(p *ProviderConfig) { p.SSH.KnownHosts = "/kh" }, "exactly one of host_key and known_hosts"},
		"relative dir":   {func(p *ProviderConfig) { p.SSH.RunDir = "run" }, "absolute path on the machine"},
		"unknown mode":   {func(p *ProviderConfig) { p.SSH.Mode = "vm" }, `mode "vm" is not container or bare`},
		"with runtime":   {func(p *ProviderConfig) { p.Runtime = "runsc" }, "for docker providers"},
	} {
		p := ProviderConfig{Name: "m", Kind: KindSSH, SSH: ok()}
		tc.edit(&p)
		if err := valid(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
}
