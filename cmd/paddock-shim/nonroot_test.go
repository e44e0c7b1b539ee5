package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/agentconn"
	procpb "github.com/paddockhq/paddock/internal/agentpb/envd/process"
	"github.com/paddockhq/paddock/internal/agentpb/envd/process/processconnect"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/testenv"
)

// podUID is the account a Kubernetes Pod runs the agent as.
const podUID = 1000

// asPodUser makes cmd run as uid and gid 1000 with no supplementary
// groups: a root parent's setuid to another uid leaves it no
// capabilities, as a Pod that drops them all.
func asPodUser(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running a process as uid 1000 needs the test to run as root")
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: podUID, Gid: podUID, Groups: []uint32{}}}
}

// podDir makes a directory uid 1000 owns, in a parent any uid may enter
// (a test's temporary directories are root's alone), removed at the
// test's end.
func podDir(t *testing.T, name string) string {
	t.Helper()
	root := podRoot(t)
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, podUID, podUID); err != nil {
		t.Fatal(err)
	}
	return dir
}

// podRoot is the test's directory that every uid may enter.
func podRoot(t *testing.T) string {
	t.Helper()
	if d, ok := podRoots[t.Name()]; ok {
		return d
	}
	d, err := os.MkdirTemp("", "paddock-pod-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	podRoots[t.Name()] = d
	t.Cleanup(func() {
		delete(podRoots, t.Name())
		_ = os.RemoveAll(d)
	})
	return d
}

var podRoots = map[string]string{}

// shimForPod copies the built shim where uid 1000 may run it (root's,
// 0755), as an image holds it.
func shimForPod(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(shimBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(podRoot(t), "paddock-shim")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeKey writes a new agent key to path, owned by uid 1000 and
// readable only by it, and returns the key.
func writeKey(t *testing.T, path string) []byte {
	t.Helper()
	key, err := agentauth.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(agentauth.EncodeKey(key)+"\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, podUID, podUID); err != nil {
		t.Fatal(err)
	}
	return key
}

// runInstall runs "paddock-shim install args…" as uid 1000 with an empty
// environment (no PATH: the init container's image holds nothing else)
// and returns its exit code and standard error.
func runInstall(t *testing.T, shim string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(shim, append([]string{"install"}, args...)...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	asPodUser(t, cmd)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// installForPod runs the init container's install as uid 1000: the shim
// and a new key into a directory of its own. It returns the directory
// and the key.
func installForPod(t *testing.T) (string, []byte) {
	t.Helper()
	shim := shimForPod(t)
	keyDir := podDir(t, "key")
	key := writeKey(t, filepath.Join(keyDir, "agent.key"))
	bin := podDir(t, "bin")
	if code, stderr := runInstall(t, shim, bin, "--key-from", filepath.Join(keyDir, "agent.key")); code != 0 {
		t.Fatalf("install: exit %d: %s", code, stderr)
	}
	return bin, key
}

// TestInstallAsPodUser: the init container's "paddock-shim install DIR
// --key-from FILE", as uid 1000 with nothing else to run, puts the shim
// (0555, the same bytes) and the key (0400) in DIR and nothing else; a
// missing directory, a missing key, a file that holds no key and a
// directory it may not write are clear errors that leave nothing behind.
func TestInstallAsPodUser(t *testing.T) {
	bin, _ := installForPod(t)
	want, err := os.ReadFile(shimBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	keyWant, err := os.ReadFile(filepath.Join(podRoot(t), "key", "agent.key"))
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]struct {
		mode os.FileMode
		data []byte
	}{"paddock-shim": {0o555, want}, "agent.key": {0o400, keyWant}} {
		p := filepath.Join(bin, name)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != w.mode || st.Sys().(*syscall.Stat_t).Uid != podUID {
			t.Errorf("%s: mode %v uid %d, want %v and uid %d", name, st.Mode(), st.Sys().(*syscall.Stat_t).Uid, w.mode, podUID)
		}
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, w.data) {
			t.Errorf("%s: not the same bytes (%v)", name, err)
		}
	}
	// Again over what is there, as a Pod's init container that runs twice.
	shim := filepath.Join(podRoot(t), "paddock-shim")
	if code, stderr := runInstall(t, shim, "--key-from", filepath.Join(podRoot(t), "key", "agent.key"), bin); code != 0 {
		t.Fatalf("second install: exit %d: %s", code, stderr)
	}
	noKey := filepath.Join(podRoot(t), "nokey")
	if err := os.WriteFile(noKey, []byte("not a key\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	rootOnly := filepath.Join(podRoot(t), "root-only")
	if err := os.Mkdir(rootOnly, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(podRoot(t), "missing")}, "install: the directory to install to: stat "},
		{[]string{bin, "--key-from", filepath.Join(podRoot(t), "missing.key")}, "install: the agent key: open "},
		{[]string{bin, "--key-from", noKey}, "holds no agent key"},
		{[]string{rootOnly}, "install paddock-shim: open " + rootOnly},
		{nil, "usage: paddock-shim install DIR"},
	} {
		code, stderr := runInstall(t, shim, c.args...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("install %q: exit %d, stderr %q; want exit 1 and %q", c.args, code, stderr, c.want)
		}
	}
	for _, dir := range []string{bin, rootOnly} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if want := map[string]string{bin: "agent.key paddock-shim", rootOnly: ""}[dir]; strings.Join(names, " ") != want {
			t.Errorf("%s holds %q, want %q", dir, names, want)
		}
	}
}

// freeLoopbackPort is a TCP port of 127.0.0.1 that nothing listens on.
func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// testCA writes a self-signed CA certificate (PEM) to path.
func testCA(t *testing.T, path string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o444); err != nil {
		t.Fatal(err)
	}
}

// podAgent is the installed shim serving as a Pod's agent: uid 1000, no
// capabilities, TCP only.
type podAgent struct {
	cmd    *exec.Cmd
	addr   string
	key    []byte
	home   string // the agent's HOME, which processes inherit
	run    string // its run directory
	work   string // a directory uid 1000 owns
	client *agentconn.Client
}

// startPodAgent installs the shim as the init container does and starts
// the installed copy with the sandbox container's command (see the
// Kubernetes provider), on a free loopback port. With podHome the agent
// runs in a mount namespace of its own whose /home holds only
// /home/user, uid 1000's, as a Pod's workspace claim (util-linux's
// unshare and setpriv set it up, then drop to uid 1000 and every
// capability).
func startPodAgent(t *testing.T, podHome bool) *podAgent {
	t.Helper()
	bin, key := installForPod(t)
	a := &podAgent{addr: freeLoopbackPort(t), key: key, home: podDir(t, "home"), run: podDir(t, "run"), work: podDir(t, "work")}
	ca := filepath.Join(podRoot(t), "ca.pem")
	testCA(t, ca)
	argv := []string{filepath.Join(bin, "paddock-shim"), "serve", "--listen", a.addr,
		"--key-file", filepath.Join(bin, "agent.key"), "--run-dir", a.run, "--user", "", "--trust", ca, "--grace", "1s"}
	if podHome {
		const script = `mount -t tmpfs -o mode=0755 tmpfs /home && mkdir -m 0750 /home/user && chown 1000:1000 /home/user &&
			exec setpriv --reuid=1000 --regid=1000 --clear-groups --inh-caps=-all --bounding-set=-all "$@"`
		argv = append([]string{"unshare", "--mount", "--", "sh", "-c", script, "sh"}, argv...)
	}
	a.cmd = exec.Command(argv[0], argv[1:]...)
	a.cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + a.home}
	a.cmd.Dir = a.work
	a.cmd.Stderr = t.Output()
	if !podHome {
		asPodUser(t, a.cmd)
	} else if os.Geteuid() != 0 {
		t.Skip("a mount namespace needs the test to run as root")
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if a.cmd.ProcessState == nil {
			_ = a.cmd.Process.Kill()
			_ = a.cmd.Wait()
		}
	})
	testenv.Eventually(t, func() error {
		c, err := agentauth.DialTLS(t.Context(), a.addr, key)
		if err == nil {
			_ = c.Close()
		}
		return err
	})
	a.client = agentconn.New(func(ctx context.Context) (net.Conn, error) { return agentauth.DialTLS(ctx, a.addr, key) })
	t.Cleanup(func() { a.client.Close() })
	return a
}

// exec runs req through the agent and returns its standard output.
func (a *podAgent) exec(t *testing.T, req agentconn.ExecRequest) string {
	t.Helper()
	es, err := a.client.Exec(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out, stderr strings.Builder
	if st, err := es.Wait(&out, &stderr); err != nil || st.Code != 0 {
		t.Fatalf("%q: exit %+v %v: %s", req.Argv, st, err, stderr.String())
	}
	return out.String()
}

// TestServeTCPAsPodUser: the installed shim, started as a Pod starts it
// (uid 1000, no capabilities, --listen with --key-file, --run-dir), serves
// over TLS pinned to the key: exec, files, tar, a terminal, a port and
// envd's files all work as uid 1000; a call naming root is refused with
// user_not_permitted; a dial with another key cannot finish TLS; the key
// file is gone and the trust bundle is in the run directory; no unix
// socket is made.
func TestServeTCPAsPodUser(t *testing.T) {
	a := startPodAgent(t, false)
	ctx := t.Context()
	if status, err := os.ReadFile("/proc/" + strconv.Itoa(a.cmd.Process.Pid) + "/status"); err != nil {
		t.Fatal(err)
	} else if !strings.Contains(string(status), "\nCapEff:\t0000000000000000\n") || !strings.Contains(string(status), "\nUid:\t1000\t1000\t1000\t1000\n") {
		t.Fatalf("the agent is not uid 1000 without capabilities:\n%s", status)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(a.run), "bin", "agent.key")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the key file is still there: %v", err)
	}
	bundle := filepath.Join(a.run, "ca-certificates.crt")
	if _, err := os.Stat(bundle); err != nil {
		t.Errorf("no trust bundle in the run directory: %v", err)
	}
	out := a.exec(t, agentconn.ExecRequest{Argv: []string{"sh", "-c", `id -u; id -g; echo "$HOME"; pwd; echo "$SSL_CERT_FILE"; cat /proc/$$/oom_score_adj`}})
	if want := strings.Join([]string{"1000", "1000", a.home, a.work, bundle, "1000"}, "\n") + "\n"; out != want {
		t.Errorf("exec: %q, want %q", out, want)
	}
	if out := a.exec(t, agentconn.ExecRequest{Argv: []string{"id", "-u"}, User: "user"}); out != "1000\n" {
		t.Errorf("exec as user: %q", out)
	}
	_, err := a.client.Exec(ctx, agentconn.ExecRequest{Argv: []string{"id"}, User: "root"})
	wantRefused(t, err)
	_, err = a.client.Terminal(ctx, agentconn.TerminalRequest{User: "root"})
	wantRefused(t, err)

	a.checkSudo(t)
	a.checkFiles(t)
	a.checkTerminal(t)
	a.checkPort(t)
	a.checkPortList(t)
	a.checkEnvdFiles(t)
	a.checkEnvdProcess(t)

	c, err := agentauth.DialTLS(ctx, a.addr, mustKey(t))
	if err == nil || !errors.Is(err, agentauth.ErrUnverified) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("a dial with another key: %v, want ErrUnverified", err)
	}
	if ents, _ := os.ReadDir(a.run); len(ents) != 1 {
		t.Errorf("the run directory holds %v, want only the trust bundle (no socket)", ents)
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, a.cmd); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func mustKey(t *testing.T) []byte {
	t.Helper()
	k, err := agentauth.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// wantRefused checks err is the agent's refusal of an account it cannot
// become.
func wantRefused(t *testing.T, err error) {
	t.Helper()
	pub, ok := errdefs.Public(err)
	if !ok || !errors.Is(err, errdefs.ErrPermissionDenied) || pub.Code != "user_not_permitted" || !strings.Contains(pub.Message, `"root"`) {
		t.Fatalf("got %v, want permission denied, user_not_permitted", err)
	}
}

// checkSudo runs the agent's sudo client (the shim called as sudo): the
// agent serves no sudo (an agent that cannot switch users never does, see
// TestAgentThatCannotSwitchUsers), and the client says so, exit 1.
func (a *podAgent) checkSudo(t *testing.T) {
	t.Helper()
	dir := podDir(t, "sudo")
	if err := os.Symlink(filepath.Join(podRoot(t), "paddock-shim"), filepath.Join(dir, "sudo")); err != nil {
		t.Fatal(err)
	}
	es, err := a.client.Exec(t.Context(), agentconn.ExecRequest{Argv: []string{filepath.Join(dir, "sudo"), "id", "-u"}})
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	if st, err := es.Wait(io.Discard, &stderr); err != nil || st.Code != 1 || !strings.Contains(stderr.String(), "the sandbox's agent does not serve sudo") {
		t.Errorf("sudo: %+v %v %q", st, err, stderr.String())
	}
}

// checkFiles writes and reads a file, and a tar both ways: uid 1000's.
func (a *podAgent) checkFiles(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	p := filepath.Join(a.work, "hello.txt")
	if _, err := a.client.WriteFile(ctx, p, strings.NewReader("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fr, err := a.client.ReadFile(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(fr)
	fr.Close()
	if err != nil || string(got) != "hello\n" {
		t.Fatalf("read back %q %v", got, err)
	}
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	_ = tw.WriteHeader(&tar.Header{Name: "d/t.txt", Mode: 0o600, Size: 3, Typeflag: tar.TypeReg})
	_, _ = tw.Write([]byte("tar"))
	_ = tw.Close()
	if _, err := a.client.UploadTar(ctx, filepath.Join(a.work, "up"), &tb); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p, filepath.Join(a.work, "up", "d", "t.txt")} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if s := st.Sys().(*syscall.Stat_t); s.Uid != podUID || s.Gid != podUID {
			t.Errorf("%s is %d:%d, want 1000:1000", f, s.Uid, s.Gid)
		}
	}
	rc, err := a.client.DownloadTar(ctx, filepath.Join(a.work, "up"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "d/t.txt") {
		t.Errorf("downloaded tar holds %q", names)
	}
}

// checkTerminal runs a shell on a terminal: uid 1000's.
func (a *podAgent) checkTerminal(t *testing.T) {
	t.Helper()
	term, err := a.client.Terminal(t.Context(), agentconn.TerminalRequest{Argv: []string{"sh"}, Env: map[string]string{"PS1": "$ "}})
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	_, _ = io.WriteString(term, "echo uid=$(id -u)-; tty; exit 7\n")
	if out := testenv.ReadUntil(t, term, "/dev/pts/"); !strings.Contains(out, "uid=1000-") {
		t.Errorf("terminal: %q", out)
	}
	if _, err := io.Copy(io.Discard, term); err != nil {
		t.Fatal(err)
	}
	if st, ok := term.Exit(); !ok || st.Code != 7 {
		t.Fatalf("terminal exit %+v %v", st, ok)
	}
}

// checkPort reaches a port of the agent's loopback through it.
func (a *podAgent) checkPort(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			_, _ = c.Write([]byte("port ok"))
			_ = c.Close()
		}
	}()
	c, err := a.client.DialPort(t.Context(), l.Addr().(*net.TCPAddr).Port)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if b, err := io.ReadAll(c); err != nil || string(b) != "port ok" {
		t.Fatalf("through the port: %q %v", b, err)
	}
}

// checkPortList lists the listening ports: the agent's own is among them,
// with its pid, which it found as uid 1000.
func (a *podAgent) checkPortList(t *testing.T) {
	t.Helper()
	ports, err := a.client.ListPorts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(a.addr)
	for _, p := range ports {
		if strconv.Itoa(p.Port) == port && p.Address == "127.0.0.1" {
			if p.PID != a.cmd.Process.Pid || p.Command != "paddock-shim" {
				t.Errorf("the agent's port: %+v", p)
			}
			return
		}
	}
	t.Errorf("the agent's port %s is not listed: %+v", port, ports)
}

// checkEnvdFiles reads a file through envd's /files as the agent's own
// account, and is refused one as root.
func (a *podAgent) checkEnvdFiles(t *testing.T) {
	t.Helper()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	hc := &http.Client{Transport: &http.Transport{Protocols: &p, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return agentauth.DialTLS(ctx, a.addr, a.key)
	}}}
	defer hc.CloseIdleConnections()
	get := func(query string) (int, string) {
		res, err := hc.Get("http://agent/files?" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("path=" + filepath.Join(a.work, "hello.txt")); code != http.StatusOK || body != "hello\n" {
		t.Errorf("envd download: %d %q", code, body)
	}
	if code, body := get("username=root&path=" + filepath.Join(a.work, "hello.txt")); code != http.StatusForbidden || !strings.Contains(body, "not available in this sandbox") {
		t.Errorf("envd download as root: %d %q, want 403", code, body)
	}
}

// envdStart starts argv through envd's process service, as user ("" names
// none), and returns its standard output once it ended, or the error.
func (a *podAgent) envdStart(t *testing.T, user string, argv ...string) (string, error) {
	t.Helper()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return agentauth.DialTLS(ctx, a.addr, a.key)
	}}
	defer tr.CloseIdleConnections()
	pc := processconnect.NewProcessClient(&http.Client{Transport: tr}, "http://agent")
	req := connect.NewRequest(&procpb.StartRequest{Process: &procpb.ProcessConfig{Cmd: argv[0], Args: argv[1:]}})
	if user != "" {
		req.Header().Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":")))
	}
	s, err := pc.Start(t.Context(), req)
	if err != nil {
		return "", err
	}
	defer s.Close()
	var out bytes.Buffer
	var end *procpb.ProcessEvent_EndEvent
	for s.Receive() {
		ev := s.Msg().GetEvent()
		out.Write(ev.GetData().GetStdout())
		if e := ev.GetEnd(); e != nil {
			end = e
		}
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	if end == nil || end.GetExitCode() != 0 {
		return "", fmt.Errorf("%q ended with %v, output %q", argv, end, out.String())
	}
	return out.String(), nil
}

// envdRun is envdStart that fails the test on an error.
func (a *podAgent) envdRun(t *testing.T, user string, argv ...string) string {
	t.Helper()
	out, err := a.envdStart(t, user, argv...)
	if err != nil {
		t.Fatalf("envd %q: %v", argv, err)
	}
	return out
}

// checkEnvdProcess starts a process through envd's process service: uid
// 1000's; one as root is refused.
func (a *podAgent) checkEnvdProcess(t *testing.T) {
	t.Helper()
	if out := a.envdRun(t, "", "id", "-u"); out != "1000\n" {
		t.Errorf("envd process: %q", out)
	}
	_, err := a.envdStart(t, "root", "id", "-u")
	if connect.CodeOf(err) != connect.CodePermissionDenied || !strings.Contains(err.Error(), `user "root" is not available`) {
		t.Errorf("envd process as root: %v, want permission denied", err)
	}
}

// TestPodUserHome: where /home/user is there (a Pod's workspace claim),
// the uid 1000 agent is the account "user": its processes get HOME and
// USER, and envd's start in the home.
func TestPodUserHome(t *testing.T) {
	a := startPodAgent(t, true)
	if status, err := os.ReadFile("/proc/" + strconv.Itoa(a.cmd.Process.Pid) + "/status"); err != nil {
		t.Fatal(err)
	} else if !strings.Contains(string(status), "\nCapEff:\t0000000000000000\n") || !strings.Contains(string(status), "\nUid:\t1000\t1000\t1000\t1000\n") {
		t.Fatalf("the agent is not uid 1000 without capabilities:\n%s", status)
	}
	if out := a.exec(t, agentconn.ExecRequest{Argv: []string{"sh", "-c", `echo "$HOME $USER $LOGNAME"; id -u`}}); out != "/home/user user user\n1000\n" {
		t.Errorf("exec: %q", out)
	}
	if out := a.envdRun(t, "", "pwd"); out != "/home/user\n" {
		t.Errorf("envd's working directory: %q", out)
	}
	if out := a.envdRun(t, "user", "sh", "-c", `echo "$HOME"; id -u`); out != "/home/user\n1000\n" {
		t.Errorf("envd as user: %q", out)
	}
}

// TestInstallOnReadOnlyRoot: install works as the init container runs it,
// on a read-only root with only its target directory writable (a mount
// namespace of its own: util-linux's unshare and setpriv make the root
// and the test's directory read-only, mount the target, and drop to uid
// 1000 and every capability), and the installed copy runs.
func TestInstallOnReadOnlyRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a mount namespace needs the test to run as root")
	}
	shim := shimForPod(t)
	root := podRoot(t)
	keyDir := podDir(t, "key")
	writeKey(t, filepath.Join(keyDir, "agent.key"))
	bin := podDir(t, "bin")
	const script = `set -e
mount -t tmpfs -o mode=0755,uid=1000,gid=1000 tmpfs "$BIN"
for m in / "$(findmnt -n -o TARGET -T "$ROOT")"; do mount -o remount,ro,bind "$m"; done
if touch "$ROOT/probe" 2>/dev/null; then echo "the root is writable"; exit 3; fi
drop() { setpriv --reuid=1000 --regid=1000 --clear-groups --inh-caps=-all --bounding-set=-all "$@"; }
drop "$SHIM" install "$BIN" --key-from "$KEY"
drop "$BIN/paddock-shim" version
stat -c '%n %a %u' "$BIN"/*`
	cmd := exec.Command("unshare", "--mount", "--", "sh", "-c", script)
	cmd.Env = []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "BIN=" + bin, "ROOT=" + root, "SHIM=" + shim, "KEY=" + filepath.Join(keyDir, "agent.key")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	want := "dev\n" + bin + "/agent.key 400 1000\n" + bin + "/paddock-shim 555 1000\n"
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
}
