package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/paddockhq/paddock/pkg/client"
)

var hostColumns = []column[client.Host]{
	{"NAME", func(h client.Host) string { return h.Name }},
	{"ADDRESS", func(h client.Host) string { return h.Address }},
	{"USER", func(h client.Host) string { return h.User }},
	{"MODE", func(h client.Host) string { return h.Mode }},
	{"HOST_KEY", func(h client.Host) string { return h.HostKeyFingerprint }},
	{"STATE", func(h client.Host) string { return h.State }},
	{"PROVIDER", func(h client.Host) string { return h.Provider }},
	{"CREATED", func(h client.Host) string { return ts(h.CreatedAt) }},
}

func hostFields(h client.Host) []field {
	return []field{
		{"ID", h.ID},
		{"NAME", h.Name},
		{"ADDRESS", h.Address},
		{"USER", h.User},
		{"HOST_KEY", h.HostKey},
		{"FINGERPRINT", h.HostKeyFingerprint},
		{"MODE", h.Mode},
		{"DOCKER_SOCKET", h.DockerSocket},
		{"RUN_DIR", h.RunDir},
		{"DISK_DIR", h.DiskDir},
		{"IDLE_TEARDOWN_SECONDS", fmt.Sprint(h.IdleTeardownSeconds)},
		{"TEARDOWN_COMMAND", h.TeardownCommand},
		{"COST_PER_HOUR", fmt.Sprint(h.CostPerHour)},
		{"STATE", h.State},
		{"LAST_USED", ts(h.LastUsedAt)},
		{"PROVIDER", h.Provider},
		{"CREATED_BY", h.CreatedBy},
		{"CREATED", ts(h.CreatedAt)},
	}
}

func (a *app) hostCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("host", "Bring your own machines: add, list and remove the org's hosts")
	scopeFlags(cmd, &sc, false)
	cmd.AddCommand(a.hostAddCmd(&sc), a.hostListCmd(&sc), a.hostGetCmd(&sc), a.hostRemoveCmd(&sc))
	return cmd
}

// hostFlags are what `host add` reads besides the name.
type hostFlags struct {
	ssh, keyFile, hostKey, knownHosts string
	req                               client.AddHostRequest
}

func (a *app) hostAddCmd(sc *scope) *cobra.Command {
	var hf hostFlags
	cmd := &cobra.Command{
		Use:   "add NAME --ssh USER@ADDRESS[:PORT] --key-file FILE (--host-key KEY | --known-hosts FILE)",
		Short: "Register a machine reachable over SSH, with Docker, for the org",
		Long: `Register a machine for the org: any machine with sshd and a Docker engine
(a laptop, a bare-metal box, a rented GPU machine). The server logs in as
USER with the private key in --key-file (OpenSSH's format, unencrypted),
which it keeps sealed and never shows again. The machine's host key must be
pinned: --host-key gives it (as authorized_keys writes it), or --known-hosts
reads it from a known_hosts file. The server checks the machine before it
registers it: a host key other than the pinned one, a key it refuses, or an
engine that does not answer are refused, and nothing is kept.

A runtime of the org then runs there when it names NAME as its provider
(project create --provider NAME).

With --idle-teardown, once no sandbox has run there for that long, the
server archives the runtimes paused there, removes its directory on the
machine, runs --teardown-command over SSH and hangs up; the next start on
it connects again.`,
		Example: `  paddock host add gpu1 --ssh root@203.0.113.7 --key-file ~/.ssh/id_ed25519 --known-hosts ~/.ssh/known_hosts
  paddock host add lab --ssh ops@lab.example.com:2222 --key-file lab.key --host-key "ssh-ed25519 AAAAC3Nz..."`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			hf.req.Name = args[0]
			if err := hf.read(); err != nil {
				return err
			}
			s, err := a.orgSession(sc)
			if err != nil {
				return err
			}
			h, err := s.c.AddHost(cmd.Context(), s.org, hf.req)
			if err != nil {
				return err
			}
			return a.printObject(h, hostFields(h))
		},
	}
	f := cmd.Flags()
	f.StringVar(&hf.ssh, "ssh", "", "USER@ADDRESS[:PORT] to log in to (port 22 by default)")
	f.StringVar(&hf.keyFile, "key-file", "", "the private key to log in with")
	f.StringVar(&hf.hostKey, "host-key", "", "the machine's host key, pinned (one line as authorized_keys writes it)")
	f.StringVar(&hf.knownHosts, "known-hosts", "", "read the machine's host key from this known_hosts file")
	f.StringVar(&hf.req.Mode, "mode", "", "container: the machine's Docker engine runs the sandboxes (default); bare: sshd only, logged in as root, each sandbox the agent in namespaces of its own")
	f.StringVar(&hf.req.DockerSocket, "docker-socket", "", "the engine's socket on the machine (default /var/run/docker.sock)")
	f.StringVar(&hf.req.RunDir, "run-dir", "", "the agents' directory on the machine (default /run/paddock)")
	f.StringVar(&hf.req.DiskDir, "disk-dir", "", "the workspace disks' directory on the machine (default /var/lib/paddock/disks)")
	f.StringVar(&hf.req.IdleTeardown, "idle-teardown", "", "tear the machine down after this long with no sandbox running on it (30m, 2h; default never)")
	f.StringVar(&hf.req.TeardownCommand, "teardown-command", "", "a shell command run on the machine when it is torn down (e.g. 'poweroff')")
	f.Float64Var(&hf.req.CostPerHour, "cost-per-hour", 0, "credits each sandbox on the machine is billed per hour, in place of the resource rate")
	return cmd
}

// read fills the request from the flags: the login, the key file's key,
// and the host key pinned.
func (hf *hostFlags) read() error {
	user, addr, ok := strings.Cut(hf.ssh, "@")
	if !ok || user == "" || addr == "" {
		return usagef("--ssh USER@ADDRESS[:PORT] is required")
	}
	hf.req.User, hf.req.Address = user, addr
	if hf.keyFile == "" {
		return usagef("--key-file is required: the private key to log in with")
	}
	key, err := os.ReadFile(hf.keyFile)
	if err != nil {
		return fmt.Errorf("--key-file: %w", err)
	}
	hf.req.PrivateKey = string(key)
	switch {
	case hf.hostKey != "" && hf.knownHosts != "":
		return usagef("give --host-key or --known-hosts, not both")
	case hf.hostKey != "":
		hf.req.HostKey = hf.hostKey
	case hf.knownHosts != "":
		if hf.req.HostKey, err = knownHostKey(hf.knownHosts, addr); err != nil {
			return err
		}
	default:
		return usagef("pin the machine's host key: --host-key KEY or --known-hosts FILE (a machine whose key nothing pins is never registered)")
	}
	return nil
}

// knownHostKey is the host key the known_hosts file holds for addr (hashed
// entries too), as authorized_keys writes it.
func knownHostKey(file, addr string) (string, error) {
	check, err := knownhosts.New(file)
	if err != nil {
		return "", fmt.Errorf("--known-hosts: %w", err)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, "22"
	}
	hostport := net.JoinHostPort(host, port)
	// Asking with a key no file holds answers the keys it has for addr.
	pub, _, _ := ed25519.GenerateKey(nil)
	probe, err := ssh.NewPublicKey(pub)
	if err != nil {
		return "", err
	}
	remote := &net.TCPAddr{IP: net.ParseIP(host)}
	if remote.IP == nil {
		remote.IP = net.IPv4zero
	}
	var ke *knownhosts.KeyError
	if err := check(hostport, remote, probe); !errors.As(err, &ke) || len(ke.Want) == 0 {
		return "", fmt.Errorf("--known-hosts: %s holds no host key for %s (connect once with ssh, or pass --host-key)", file, knownhosts.Normalize(hostport))
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(ke.Want[0].Key))), nil
}

func (a *app) hostListCmd(sc *scope) *cobra.Command {
	return listCmd(a, "List the org's machines, without their keys", hostColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.Host], error) {
			s, err := a.orgSession(sc)
			if err != nil {
				return client.List[client.Host]{}, err
			}
			return s.c.ListHosts(ctx, s.org, page)
		})
}

func (a *app) hostGetCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:   "get NAME",
		Short: "Show a machine of the org",
		Args:  exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.orgSession(sc)
			if err != nil {
				return err
			}
			h, err := s.c.GetHost(cmd.Context(), s.org, args[0])
			if err != nil {
				return err
			}
			return a.printObject(h, hostFields(h))
		},
	}
}

func (a *app) hostRemoveCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"remove"},
		Short:   "Remove a machine: yours, or any of the org's for an admin",
		Long: `Remove a machine from the org. It is refused while a sandbox is on it
(host_in_use): archive or delete those runtimes first. Its connection closes.`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.orgSession(sc)
			if err != nil {
				return err
			}
			if err := s.c.RemoveHost(cmd.Context(), s.org, args[0]); err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.env.Stdout, "removed host %s\n", args[0])
			return err
		},
	}
}
