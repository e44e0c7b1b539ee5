package docker

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/docker/docker/api/types/mount"

	"github.com/paddockhq/paddock/internal/provider"
)

// Names in an open sandbox under gVisor. Docker gives a container on a
// user-defined network (paddock's proxy and open networks) a resolv.conf
// naming its embedded DNS server, 127.0.0.11, which NAT rules in the
// container's network namespace send to a socket dockerd listens on there.
// gVisor's network stack has a loopback of its own and never passes those
// rules, so under gVisor nothing answers at 127.0.0.11. An open sandbox
// under gVisor therefore gets a resolv.conf naming the servers the embedded
// one would forward to: the host's, picked as Docker picks them. The
// queries then leave through the open bridge like any other packet, under
// the same firewall rules. A proxy sandbox needs none: the proxy resolves
// names for it, and its network has no route to a DNS server anyway.

// Where the host's resolvers are read: the host's resolv.conf, or
// systemd-resolved's list of upstream servers when the host's file names
// only the local stub (as Docker does).
const (
	hostResolvConf    = "/etc/resolv.conf"
	systemdResolvConf = "/run/systemd/resolve/resolv.conf"
	systemdStub       = "127.0.0.53"
)

// defaultNameservers are Docker's own fallback when the host names no
// resolver a container can reach.
var defaultNameservers = []string{"8.8.8.8", "8.8.4.4"}

// resolvConfMount returns the mount that gives a gVisor sandbox in network
// policy n its resolv.conf, or false when it keeps Docker's.
func (p *Provider) resolvConfMount(n provider.NetworkPolicy) (mount.Mount, bool, error) {
	if !p.gvisor() || n != provider.NetworkOpen {
		return mount.Mount{}, false, nil
	}
	path, err := p.writeResolvConf(upstreamResolvConf(os.ReadFile))
	if err != nil {
		return mount.Mount{}, false, fmt.Errorf("resolv.conf for a gVisor sandbox: %w", err)
	}
	return mount.Mount{Type: mount.TypeBind, Source: path, Target: "/etc/resolv.conf", ReadOnly: true}, true, nil
}

// writeResolvConf puts content at RunDir/resolv-<hash of content>.conf
// (once per content: a sandbox keeps the file it started with when the
// host's resolvers change) and returns its path. Like the shim's copy, it
// lives in the run directory so its host path is not the sandbox's to see.
func (p *Provider) writeResolvConf(content []byte) (string, error) {
	sum := sha256.Sum256(content)
	dst := filepath.Join(p.cfg.RunDir, "resolv-"+hex.EncodeToString(sum[:])[:16]+".conf")
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	tmp, err := os.CreateTemp(p.cfg.RunDir, ".resolv-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		_ = tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o444); err != nil {
		_ = tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return dst, os.Rename(tmp.Name(), dst)
}

// upstreamResolvConf builds the resolv.conf of an open gVisor sandbox from
// the host's, read with read: its search and options lines, and its IPv4
// nameservers but loopback ones (the sandbox's loopback is not the host's),
// or defaultNameservers when none is left. paddock's networks have no IPv6,
// so IPv6 servers are left out.
func upstreamResolvConf(read func(string) ([]byte, error)) []byte {
	host, _ := read(hostResolvConf) // a host without one gets the defaults, as in Docker
	if servers, _ := parseResolvConf(host); len(servers) > 0 && allEqual(servers, systemdStub) {
		if b, err := read(systemdResolvConf); err == nil {
			host = b
		}
	}
	servers, rest := parseResolvConf(host)
	var out bytes.Buffer
	out.WriteString("# Written by paddock: gVisor cannot reach Docker's embedded DNS server.\n")
	n := 0
	for _, s := range servers {
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Unmap().Is4() || a.IsLoopback() {
			continue
		}
		fmt.Fprintf(&out, "nameserver %s\n", a.Unmap())
		n++
	}
	if n == 0 {
		for _, s := range defaultNameservers {
			fmt.Fprintf(&out, "nameserver %s\n", s)
		}
	}
	for _, l := range rest {
		out.WriteString(l + "\n")
	}
	return out.Bytes()
}

// parseResolvConf returns the nameserver addresses of a resolv.conf and
// its search, domain and options lines.
func parseResolvConf(b []byte) (servers, rest []string) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			servers = append(servers, f[1])
		case "search", "domain", "options":
			rest = append(rest, strings.Join(f, " "))
		}
	}
	return servers, rest
}

func allEqual(ss []string, v string) bool {
	for _, s := range ss {
		if s != v {
			return false
		}
	}
	return true
}
