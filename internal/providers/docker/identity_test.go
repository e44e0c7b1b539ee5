package docker_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/provider/providertest"
	"github.com/paddockhq/paddock/internal/providers/docker"
)

// socketDir returns a started sandbox's run directory on the host.
func socketDir(t *testing.T, h provider.Handle) string {
	t.Helper()
	var st struct {
		SocketDir string `json:"socket_dir"`
	}
	mustJSON(t, h.State, &st)
	if st.SocketDir == "" {
		t.Fatal("the handle has no socket directory")
	}
	return st.SocketDir
}

// TestRunDirLockedFromSandbox: once the agent listens, nothing in the
// sandbox can change what the control plane connects to, read the agent's
// key, or write to the host through the run directory. Under gVisor the
// lock is the host's ownership and mode, which gVisor's kernel must see
// and enforce on the bind mount.
func TestRunDirLockedFromSandbox(t *testing.T) { eachFlavour(t, false, testRunDirLocked) }

func testRunDirLocked(t *testing.T, fl flavour) {
	e := newFlavourEnv(t, fl)
	h := e.started(t, e.spec())
	for _, tc := range []struct {
		name string
		cmd  string
	}{
		{"remove the socket", "rm -f /.paddock/run/agent.sock"},
		{"replace the socket with a link", "ln -sf /elsewhere/agent.sock /.paddock/run/agent.sock"},
		{"rename the socket", "mv /.paddock/run/agent.sock /.paddock/run/old.sock"},
		{"fill the host disk", "dd if=/dev/zero of=/.paddock/run/fill bs=1024 count=1024"},
		{"chmod the directory", "chmod 777 /.paddock/run"},
		{"read the agent key file", "cat /.paddock/run/agent.key"},
		{"read the agent's environment", "cat /proc/1/environ"},
		{"read the agent's memory", "head -c 1 /proc/1/mem"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out, code := e.execIn(t, h.ID, "sh", "-c", tc.cmd); code == 0 {
				t.Fatalf("%q succeeded inside the sandbox: %s", tc.cmd, out)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(socketDir(t, h), "agent.key")); !os.IsNotExist(err) {
		t.Fatalf("the agent key file is still on the host: %v", err)
	}
	conn, err := e.p.DialAgent(t.Context(), h)
	if err != nil {
		t.Fatal(err)
	}
	if err := providertest.CheckAgent(t.Context(), conn); err != nil {
		t.Fatalf("the agent stopped answering: %v", err)
	}
	// The sandbox's mounts name none of the host's paths: not the run
	// directory, not the shim's, not the workspace disks'.
	mi := e.mustExec(t, h.ID, "cat", "/proc/self/mountinfo")
	for _, p := range []string{e.runDir, e.shim, e.diskDir, filepath.Dir(e.shim)} {
		if strings.Contains(mi, p) {
			t.Errorf("the sandbox's mountinfo shows the host path %s:\n%s", p, mi)
		}
	}
}

// TestAgentIdentityRefusesImpostors plays the attack from the security
// review at the host's side, as if the run directory's lock had failed:
// the victim's live agent socket, or an impostor, takes the place of the
// attacker's agent socket. The control plane must refuse every one, with
// agent_unverified, and keep talking to the victim. Under gVisor, where
// the peer's credentials name the gofer, the key alone must do it.
func TestAgentIdentityRefusesImpostors(t *testing.T) { eachFlavour(t, false, testImpostors) }

func testImpostors(t *testing.T, fl flavour) {
	e := newFlavourEnv(t, fl)
	attacker := e.started(t, e.spec())
	victim := e.started(t, e.spec())
	aDir, vDir := socketDir(t, attacker), socketDir(t, victim)
	aSock, vSock := filepath.Join(aDir, "agent.sock"), filepath.Join(vDir, "agent.sock")
	// A handle with another key (a stale or forged recovery state) reaches
	// the right socket and the right process, and is still refused: the
	// agent cannot prove the key the handle expects.
	t.Run("the right agent, another key", func(t *testing.T) {
		var st map[string]any
		mustJSON(t, victim.State, &st)
		st["key"] = strings.Repeat("ab", 32)
		forged := victim
		forged.State, _ = json.Marshal(st)
		_, err := e.p.DialAgent(t.Context(), forged)
		if pub, ok := errdefs.Public(err); !ok || pub.Code != docker.CodeAgentUnverified {
			t.Fatalf("DialAgent with a forged key = %v; want %s", err, docker.CodeAgentUnverified)
		}
	})

	// Undo the lock, as a sandbox with a writable run directory would have.
	if err := os.Chmod(aDir, 0o777); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		plant func(t *testing.T)
	}{
		{"symlink to the victim's socket", func(t *testing.T) {
			if err := os.Symlink(vSock, aSock); err != nil {
				t.Fatal(err)
			}
		}},
		{"the victim's socket itself (hard link)", func(t *testing.T) {
			if err := os.Link(vSock, aSock); err != nil {
				t.Fatal(err)
			}
		}},
		{"a socket served by another process", func(t *testing.T) {
			l, err := net.Listen("unix", aSock)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					// Answer anything, as a fake agent would.
					_, _ = c.Write(make([]byte, 64))
					c.Close()
				}
			}()
		}},
		{"a regular file", func(t *testing.T) {
			if err := os.WriteFile(aSock, []byte("x"), 0o666); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.Remove(aSock); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			tc.plant(t)
			conn, err := e.p.DialAgent(t.Context(), attacker)
			if err == nil {
				err = providertest.CheckAgent(t.Context(), conn)
				t.Fatalf("the dial reached an agent through a planted socket (health: %v)", err)
			}
			if pub, ok := errdefs.Public(err); !ok || pub.Code != docker.CodeAgentUnverified {
				t.Fatalf("DialAgent = %v; want %s", err, docker.CodeAgentUnverified)
			}
			conn, err = e.p.DialAgent(t.Context(), victim)
			if err != nil {
				t.Fatalf("the victim's agent: %v", err)
			}
			if err := providertest.CheckAgent(t.Context(), conn); err != nil {
				t.Fatalf("the victim's agent: %v", err)
			}
		})
	}
}
