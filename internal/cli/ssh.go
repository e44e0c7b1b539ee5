package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

// ssh and ssh-config: the system's OpenSSH client, reaching runtimes
// through the server's SSH gateway with a key pair paddock keeps for it
// (<config dir>/paddock/ssh/id_ed25519) and the gateway's host key pinned
// in a known_hosts file of its own beside it.

// sshKeyName is the key pair's file name; its public key adds ".pub".
const sshKeyName = "id_ed25519"

// sshSetup is what an ssh client needs to reach the gateway.
type sshSetup struct {
	host, port string
	key        string // the private key's file
	knownHosts string
}

// options are the ssh options that use the setup.
func (s sshSetup) options() []string {
	return []string{
		"-p", s.port, "-i", s.key,
		"-o", "IdentitiesOnly=yes",
		"-o", "UserKnownHostsFile=" + s.knownHosts,
		"-o", "StrictHostKeyChecking=yes",
	}
}

// sshDir is where paddock keeps its SSH files.
func (a *app) sshDir() (string, error) {
	if dir := a.getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "paddock", "ssh"), nil
	}
	if home := a.getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "paddock", "ssh"), nil
	}
	return "", usagef("cannot tell where to keep the SSH key: set XDG_CONFIG_HOME or HOME")
}

// prepareSSH makes sure paddock's key pair exists and is registered for the
// caller, and that the gateway's host key is pinned. orgID is the org of
// the runtimes to reach.
func (a *app) prepareSSH(ctx context.Context, c *client.Client, orgID string) (sshSetup, error) {
	info, err := c.SSHInfo(ctx)
	if client.IsNotFound(err) {
		return sshSetup{}, errors.New("the server's SSH gateway is off (ssh_listen)")
	}
	if err != nil {
		return sshSetup{}, err
	}
	host, port, err := net.SplitHostPort(info.Address)
	if err != nil || host == "" {
		return sshSetup{}, fmt.Errorf("the server gave the SSH gateway's address as %q, which is not host:port", info.Address)
	}
	dir, err := a.sshDir()
	if err != nil {
		return sshSetup{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return sshSetup{}, err
	}
	s := sshSetup{host: host, port: port, key: filepath.Join(dir, sshKeyName), knownHosts: filepath.Join(dir, "known_hosts")}
	pub, err := ensureKeyPair(s.key)
	if err != nil {
		return sshSetup{}, err
	}
	if err := a.registerKey(ctx, c, s.key, pub, orgID); err != nil {
		return sshSetup{}, err
	}
	if err := pinHostKey(s.knownHosts, host, port, info.HostKey); err != nil {
		return sshSetup{}, err
	}
	return s, nil
}

// ensureKeyPair returns the public key of the pair at key, making the pair
// (ed25519, the private key 0600) if there is none.
func ensureKeyPair(key string) (string, error) {
	if b, err := os.ReadFile(key + ".pub"); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if _, err := os.Stat(key); err == nil {
		return "", fmt.Errorf("%s has no %s.pub beside it: remove it to make a new key pair", key, filepath.Base(key))
	}
	host, _ := os.Hostname()
	priv, pub, err := client.GenerateSSHKey("paddock@" + host)
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(key, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(priv); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	if err := os.WriteFile(key+".pub", []byte(pub+"\n"), 0o644); err != nil {
		return "", err
	}
	return pub, nil
}

// registerKey registers pub for the caller unless it is already.
func (a *app) registerKey(ctx context.Context, c *client.Client, file, pub, orgID string) error {
	fp, err := client.SSHFingerprint(pub)
	if err != nil {
		return fmt.Errorf("%s.pub: %w", file, err)
	}
	opts := client.ListOptions{Limit: 500}
	for {
		page, err := c.ListSSHKeys(ctx, opts)
		if err != nil {
			return err
		}
		for _, k := range page.Items {
			if k.Fingerprint != fp {
				continue
			}
			if k.OrgID != "" && orgID != "" && k.OrgID != orgID {
				return fmt.Errorf("paddock's SSH key (%s) was added with an API key of another org, and works only there: remove it with 'paddock ssh-key rm %s' and run this again", fp, k.ID)
			}
			return nil
		}
		if page.NextCursor == "" {
			break
		}
		opts.Cursor = page.NextCursor
	}
	_, err = c.AddSSHKey(ctx, client.AddSSHKeyRequest{Name: "paddock CLI", PublicKey: pub})
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.Code == "ssh_key_exists" {
		return fmt.Errorf("the SSH key %s is registered to another user: move it away and run this again to make a new one", file)
	}
	return err
}

// pinHostKey writes the gateway's host key for host:port into knownHosts,
// in place of any key it had for it.
func pinHostKey(knownHosts, host, port, hostKey string) error {
	pattern := host
	if port != "22" {
		pattern = "[" + host + "]:" + port
	}
	var keep []string
	if b, err := os.ReadFile(knownHosts); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] != pattern {
				keep = append(keep, line)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	keep = append(keep, pattern+" "+hostKey)
	return os.WriteFile(knownHosts, []byte(strings.Join(keep, "\n")+"\n"), 0o600)
}

func (a *app) sshCmd() *cobra.Command {
	var sc scope
	cmd := &cobra.Command{
		Use:   "ssh [flags] RUNTIME [flags] [-- COMMAND [ARG...]]",
		Short: "Connect to a runtime with ssh, through the server's SSH gateway",
		Long: `Run the system's ssh (OpenSSH's client) into a runtime's sandbox through the
server's SSH gateway: a shell, or COMMAND. paddock keeps a key pair of its
own for this (~/.config/paddock/ssh/id_ed25519, made and registered on first
use) and pins the gateway's host key in a known_hosts file beside it, so ssh
never asks. A paused runtime wakes. paddock exits as ssh does. ` + runtimeArg,
		Example: `  paddock ssh agent
  paddock ssh agent -- ls -la`,
		DisableFlagParsing: true, // see commandLine
		RunE: func(cmd *cobra.Command, args []string) error {
			arg, argv, help, err := a.commandLine(cmd, args)
			if err != nil {
				return err
			}
			if help {
				return cmd.Help()
			}
			ctx := cmd.Context()
			t, err := a.target(ctx, &sc, arg)
			if err != nil {
				return err
			}
			rt, err := t.c.GetRuntime(ctx, t.org, t.ws, t.rid)
			if err != nil {
				return err
			}
			s, err := a.prepareSSH(ctx, t.c, rt.OrgID)
			if err != nil {
				return err
			}
			return a.execSSH(append(append(s.options(), "--", rt.ID+"@"+s.host), argv...))
		},
	}
	scopeFlags(cmd, &sc, true)
	return cmd
}

// execSSH runs the system's ssh with args: in place of paddock when the
// CLI runs on the process's own terminal, else as a child whose exit code
// paddock takes.
func (a *app) execSSH(args []string) error {
	path, err := exec.LookPath("ssh")
	if err != nil {
		return errors.New("ssh not found: install OpenSSH's client (the openssh-client package)")
	}
	if a.env.Stdin == os.Stdin && a.env.Stdout == os.Stdout && a.env.Stderr == os.Stderr {
		return syscall.Exec(path, append([]string{"ssh"}, args...), os.Environ())
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.env.Stdin, a.env.Stdout, a.env.Stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return exitCode(ee.ExitCode())
	}
	return err
}

// sshHost is one runtime's Host block of ssh-config.
type sshHost struct {
	Host                  string `json:"host"`
	HostName              string `json:"hostname"`
	Port                  string `json:"port"`
	User                  string `json:"user"`
	IdentityFile          string `json:"identity_file"`
	UserKnownHostsFile    string `json:"user_known_hosts_file"`
	StrictHostKeyChecking string `json:"strict_host_key_checking"`
}

func (a *app) sshConfigCmd() *cobra.Command {
	var sc scope
	cmd := &cobra.Command{
		Use:   "ssh-config [RUNTIME...]",
		Short: "Print ssh_config Host blocks for runtimes, for ssh and VS Code Remote-SSH",
		Long: `Print a "Host paddock-<project>" block per runtime (default: every runtime of
the workspace) to paste into ~/.ssh/config, so that ssh, scp, rsync and VS
Code's Remote-SSH reach them by name through the server's SSH gateway. Like
'paddock ssh', it makes and registers paddock's key pair and pins the
gateway's host key first. ` + runtimeArg,
		Example: `  paddock ssh-config >> ~/.ssh/config
  ssh paddock-agent`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.workspaceSession(&sc)
			if err != nil {
				return err
			}
			rts, err := a.runtimesNamed(ctx, s, args)
			if err != nil {
				return err
			}
			if len(rts) == 0 {
				return fmt.Errorf("workspace %s has no runtimes", s.ws)
			}
			setup, err := a.prepareSSH(ctx, s.c, rts[0].OrgID)
			if err != nil {
				return err
			}
			hosts := make([]sshHost, 0, len(rts))
			for _, rt := range rts {
				alias := rt.ProjectName
				if alias == "" {
					alias = strings.ReplaceAll(rt.ID, "-", "")[:12]
				}
				hosts = append(hosts, sshHost{
					Host: "paddock-" + alias, HostName: setup.host, Port: setup.port, User: rt.ID,
					IdentityFile: setup.key, UserKnownHostsFile: setup.knownHosts, StrictHostKeyChecking: "yes",
				})
			}
			if a.output == outputJSON {
				return a.printJSON(hosts)
			}
			var b strings.Builder
			for i, h := range hosts {
				if i > 0 {
					b.WriteString("\n")
				}
				fmt.Fprintf(&b, "Host %s\n  HostName %s\n  Port %s\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking %s\n",
					h.Host, h.HostName, h.Port, h.User, quoteSSH(h.IdentityFile), quoteSSH(h.UserKnownHostsFile), h.StrictHostKeyChecking)
			}
			_, err = fmt.Fprint(a.env.Stdout, b.String())
			return err
		},
	}
	scopeFlags(cmd, &sc, true)
	return cmd
}

// runtimesNamed resolves RUNTIME arguments, or lists the workspace's
// runtimes when there are none.
func (a *app) runtimesNamed(ctx context.Context, s session, args []string) ([]client.Runtime, error) {
	var out []client.Runtime
	if len(args) == 0 {
		opts := client.ListOptions{Limit: 500}
		for {
			page, err := s.c.ListRuntimes(ctx, s.org, s.ws, opts)
			if err != nil {
				return nil, err
			}
			out = append(out, page.Items...)
			if page.NextCursor == "" {
				return out, nil
			}
			opts.Cursor = page.NextCursor
		}
	}
	for _, arg := range args {
		id, err := a.runtimeID(ctx, s.c, s.org, s.ws, arg)
		if err != nil {
			return nil, err
		}
		rt, err := s.c.GetRuntime(ctx, s.org, s.ws, id)
		if err != nil {
			return nil, err
		}
		out = append(out, rt)
	}
	return out, nil
}

// quoteSSH quotes a path for ssh_config when it has a space.
func quoteSSH(p string) string {
	if strings.ContainsAny(p, " \t") {
		return `"` + p + `"`
	}
	return p
}
