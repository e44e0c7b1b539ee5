package config

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
)

// KindSSH is the kind of a provider that runs sandboxes on a machine
// reached over SSH, on its Docker engine (or, in bare mode, as processes
// of the machine's own).
const KindSSH = "ssh"

// SSHProvider is an ssh provider's settings: the `ssh:` block of its entry
// in the providers list (the file only).
type SSHProvider struct {
	// Address is the machine's sshd, host or host:port (22 by default).
	Address string `yaml:"address"`
	// User is the account paddock logs in as: root, or one that may use
	// the engine, mount loop devices and chown (see ARCHITECTURE, "The
	// ssh provider").
	User string `yaml:"user"`
	// KeyFile is the private key it logs in with (OpenSSH format,
	// unencrypted).
	KeyFile string `yaml:"key_file"`
	// HostKey pins the machine's host key (a line as authorized_keys
	// writes it: "ssh-ed25519 AAAA…"); KnownHosts names a known_hosts
	// file that holds it instead. Exactly one is required: an unknown or
	// changed key is refused.
	HostKey    string `yaml:"host_key"`
	KnownHosts string `yaml:"known_hosts"`
	// DockerSocket is the engine's socket on the machine
	// (/var/run/docker.sock by default).
	DockerSocket string `yaml:"docker_socket"`
	// RunDir and DiskDir are where the agent sockets and the workspace
	// disks live on the machine (/run/paddock and /var/lib/paddock/disks
	// by default).
	RunDir  string `yaml:"run_dir"`
	DiskDir string `yaml:"disk_dir"`
	// Mode is container (the default: sandboxes are containers on the
	// machine's Docker engine) or bare (the machine needs sshd only: each
	// sandbox's agent is a supervised process there, run as root; see
	// ARCHITECTURE, "Bare mode").
	Mode string `yaml:"mode"`
}

// validate checks the block and makes its local paths absolute.
func (s *SSHProvider) validate() error {
	if s.Address == "" || s.User == "" || s.KeyFile == "" {
		return errors.New("address, user and key_file are required")
	}
	host := s.Address
	if h, _, err := net.SplitHostPort(s.Address); err == nil {
		host = h
	}
	if host == "" || strings.ContainsAny(host, " /") {
		return fmt.Errorf("address %q is not host or host:port", s.Address)
	}
	if s.Mode != "" && s.Mode != "container" && s.Mode != "bare" {
		return fmt.Errorf("mode %q is not container or bare", s.Mode)
	}
	if (s.HostKey == "") == (s.KnownHosts == "") {
		return errors.New("pin the machine's host key: name exactly one of host_key and known_hosts")
	}
	for _, p := range []*string{&s.KeyFile, &s.KnownHosts} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	for key, p := range map[string]string{"docker_socket": s.DockerSocket, "run_dir": s.RunDir, "disk_dir": s.DiskDir} {
		if p != "" && !filepath.IsAbs(p) {
			return fmt.Errorf("%s %q must be an absolute path on the machine", key, p)
		}
	}
	return nil
}
