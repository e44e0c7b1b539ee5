package testenv

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// SSHHost is a machine for the ssh provider that a test makes: a
// dedicated Docker engine (StartDockerd) and an sshd of its own (Debian's
// openssh-server), both in the engine's network namespace, which the test
// reaches over a veth pair of its own. Root logs in with Key; the host key
// is HostKey. The machine shares this host's filesystem, so its paths
// (Dir) are under a directory of the test's.
type SSHHost struct {
	Engine *Dockerd
	// Addr is sshd's address (ip:22 on the namespace's end of the pair).
	Addr string
	// LocalIP is this host's end of the pair.
	LocalIP string
	// KeyFile is root's private key there; HostKey the host key's public
	// half as authorized_keys writes it.
	KeyFile string
	HostKey string
	// Socket is the engine's socket path on the machine.
	Socket string
	// Dir is a directory of the machine's for the provider's run and
	// disk directories.
	Dir string

	dir  string
	veth string
	sshd *exec.Cmd
}

// StartSSHHost makes an SSHHost and takes it down when t ends. It needs
// root, dockerd, ip, nsenter and sshd (scripts/setup-host.sh installs
// them); in CI a missing one fails the test.
func StartSSHHost(t testing.TB) *SSHHost {
	t.Helper()
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		unavailable(t, "the ssh provider's tests need Debian's openssh-server (%v)", err)
	}
	for _, tool := range []string{"ip", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			unavailable(t, "the ssh provider's tests need %s (%v)", tool, err)
		}
	}
	engine := StartDockerd(t)
	h := &SSHHost{Engine: engine, dir: ShortTempDir(t)}
	h.Socket = strings.TrimPrefix(engine.Host, "unix://")
	h.Dir = filepath.Join(h.dir, "m")
	if err := os.Mkdir(h.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ip := h.link(t, engine.cmd.Process.Pid)
	h.Addr = net.JoinHostPort(ip, "22")
	h.keys(t, ip)
	h.StartSSHD(t)
	t.Cleanup(func() {
		h.StopSSHD(t)
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(h.dir, "sshd.log"))
			t.Logf("sshd's log:\n%s", b)
		}
	})
	return h
}

// link makes the veth pair between this namespace and the engine's
// (pid's), on a random /30 of 10.213.0.0/16, and returns the engine's
// end's address.
func (h *SSHHost) link(t testing.TB, pid int) string {
	t.Helper()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	suffix := fmt.Sprintf("%x", b)
	h.veth = "pdks" + suffix
	peer := "pdkn" + suffix
	base := fmt.Sprintf("10.213.%d.%d", b[0], b[1]&0xfc)
	local, remote := offset(base, 1), offset(base, 2)
	ns := "--net=/proc/" + strconv.Itoa(pid) + "/ns/net"
	for _, argv := range [][]string{
		{"ip", "link", "add", h.veth, "type", "veth", "peer", "name", peer},
		{"ip", "link", "set", peer, "netns", strconv.Itoa(pid)},
		{"ip", "addr", "add", local + "/30", "dev", h.veth},
		{"ip", "link", "set", h.veth, "up"},
		{"nsenter", ns, "ip", "addr", "add", remote + "/30", "dev", peer},
		{"nsenter", ns, "ip", "link", "set", peer, "up"},
		{"nsenter", ns, "ip", "link", "set", "lo", "up"},
	} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			_ = exec.Command("ip", "link", "del", h.veth).Run()
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", h.veth).Run() })
	h.LocalIP = local
	return remote
}

// offset is base's last number plus n.
func offset(base string, n int) string {
	i := strings.LastIndexByte(base, '.')
	last, _ := strconv.Atoi(base[i+1:])
	return base[:i+1] + strconv.Itoa(last+n)
}

// keys writes sshd's host key, root's key and sshd's configuration.
func (h *SSHHost) keys(t testing.TB, ip string) {
	t.Helper()
	hostPub := writeKey(t, filepath.Join(h.dir, "host_ed25519"))
	h.HostKey = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(hostPub)))
	h.KeyFile = filepath.Join(h.dir, "id_ed25519")
	userPub := writeKey(t, h.KeyFile)
	if err := os.WriteFile(filepath.Join(h.dir, "authorized_keys"), ssh.MarshalAuthorizedKey(userPub), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := strings.Join([]string{
		"ListenAddress " + ip + ":22",
		"HostKey " + filepath.Join(h.dir, "host_ed25519"),
		"PidFile " + filepath.Join(h.dir, "sshd.pid"),
		"AuthorizedKeysFile " + filepath.Join(h.dir, "authorized_keys"),
		"PermitRootLogin prohibit-password",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"AllowStreamLocalForwarding local",
		"AllowTcpForwarding local", // sshd lets a path be dialled only with it (as its default, yes, does)
		"X11Forwarding no",
		"PrintMotd no",
		"MaxSessions 64",
		"MaxStartups 64",
		// bash reads ~/.bashrc for a command sshd runs, unless it is a
		// nested shell: this host's may do anything (a shell plug-in's
		// stale lock once made every command wait a minute), and the
		// machine is to be a fresh one's login.
		"SetEnv SHLVL=1",
		"",
	}, "\n")
	if err := os.WriteFile(filepath.Join(h.dir, "sshd_config"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	// sshd's privilege separation directory.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
}

// writeKey writes a new ed25519 private key to path and returns its
// public half.
func writeKey(t testing.TB, path string) ssh.PublicKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// StartSSHD starts sshd (again) in the engine's namespace and waits until
// it accepts connections.
func (h *SSHHost) StartSSHD(t testing.TB) {
	t.Helper()
	pid := h.Engine.cmd.Process.Pid
	cmd := exec.Command("nsenter", "--net=/proc/"+strconv.Itoa(pid)+"/ns/net",
		"/usr/sbin/sshd", "-D", "-e", "-o", "LogLevel=DEBUG1", "-f", filepath.Join(h.dir, "sshd_config"))
	log, err := os.OpenFile(filepath.Join(h.dir, "sshd.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	h.sshd = cmd
	// It answers once it sends its banner: a connection accepted is not
	// yet a session sshd will serve.
	Eventually(t, func() error {
		err := h.banner()
		if err != nil {
			b, _ := os.ReadFile(filepath.Join(h.dir, "sshd.log"))
			return fmt.Errorf("sshd does not answer on %s: %w\n%s", h.Addr, err, b)
		}
		return nil
	})
}

// banner connects to sshd and reads its protocol banner.
func (h *SSHHost) banner() error {
	c, err := net.DialTimeout("tcp", h.Addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return err
	}
	b := make([]byte, 4)
	if _, err := io.ReadFull(c, b); err != nil {
		return fmt.Errorf("no banner: %w", err)
	}
	if string(b) != "SSH-" {
		return fmt.Errorf("a banner %q, not sshd's", b)
	}
	return nil
}

// StopSSHD stops sshd and every connection it serves: the processes
// serving them (its descendants) and then sshd are killed, by their ids.
// Stopping a stopped sshd does nothing.
func (h *SSHHost) StopSSHD(t testing.TB) {
	t.Helper()
	if h.sshd == nil {
		return
	}
	cmd := h.sshd
	h.sshd = nil
	for _, pid := range descendants(cmd.Process.Pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = cmd.Wait()
	// Stopped once nothing accepts on its address, so that a start after
	// it is the only sshd there.
	Eventually(t, func() error {
		c, err := net.DialTimeout("tcp", h.Addr, 2*time.Second)
		if err != nil {
			return nil
		}
		c.Close()
		return fmt.Errorf("something still accepts on %s after sshd was stopped", h.Addr)
	})
}

// DropConnections ends every SSH connection sshd serves (the processes
// that serve them, its children, are killed by their ids), while sshd
// itself goes on listening: the client's TCP connection is closed under
// it.
func (h *SSHHost) DropConnections(t testing.TB) int {
	t.Helper()
	if h.sshd == nil {
		t.Fatal("sshd is not running")
	}
	// nsenter execs sshd, so its pid is sshd's. Each connection's
	// processes are its descendants.
	var pids []int
	for _, child := range children(h.sshd.Process.Pid) {
		pids = append(pids, descendants(child)...)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return len(pids)
}

// children are pid's child processes.
func children(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// descendants are pid and every process below it.
func descendants(pid int) []int {
	out := []int{pid}
	for _, c := range children(pid) {
		out = append(out, descendants(c)...)
	}
	return out
}

// LoadImage copies ref from the shared engine into this one.
func (d *Dockerd) LoadImage(t testing.TB, ref string) {
	t.Helper()
	save := exec.Command("docker", "save", ref)
	load := exec.Command("docker", "-H", d.Host, "load")
	pipe, err := save.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	load.Stdin = pipe
	if err := save.Start(); err != nil {
		t.Fatal(err)
	}
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("docker load: %v\n%s", err, out)
	}
	if err := save.Wait(); err != nil {
		t.Fatal(err)
	}
}

// Containers counts the running containers of runtime runtimeID on this
// engine (by the label every provider puts on them).
func (d *Dockerd) Containers(t testing.TB, runtimeID string) int {
	t.Helper()
	out, err := exec.Command("docker", "-H", d.Host, "ps", "-q", "--filter", "label=dev.paddock.runtime="+runtimeID).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return len(strings.Fields(string(out)))
}

// RunAs makes every session sshd opens run as uid (and its group, gid
// uid) rather than as the account that logged in: sshd's ForceCommand
// runs the command through setpriv. It is a machine whose login account
// is not root, without adding an account to this host. sshd is started
// again with it.
func (h *SSHHost) RunAs(t testing.TB, uid int) {
	t.Helper()
	conf := filepath.Join(h.dir, "sshd_config")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fmt.Fprintf(f, "ForceCommand exec setpriv --reuid=%d --regid=%d --clear-groups -- sh -c \"$SSH_ORIGINAL_COMMAND\"\n", uid, uid)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	h.StopSSHD(t)
	h.StartSSHD(t)
}
