package server_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/sshgw"
	"github.com/paddockhq/paddock/pkg/client"
)

var sshLineRE = regexp.MustCompile(`paddock ssh gateway on (\S+) \(host key (\S+)\)`)

// TestSSHGateway: the gateway listens where ssh_listen says, with a host
// key made on first start (0600) and kept; GET /api/v1/ssh tells clients
// where it is and which key to pin; a shutdown closes it.
func TestSSHGateway(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cfg := testConfig(t, dir, "127.0.0.1:0")
	cfg.SSHListen = "127.0.0.1:0"
	url, out, stop := serve(t, cfg)
	m := sshLineRE.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no gateway in the output:\n%s", out)
	}
	addr, fingerprint := m[1], m[2]
	keyFile := filepath.Join(dir, sshgw.HostKeyFile)
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("host key file: %v %v", fi, err)
	}

	// The gateway answers with that key, and refuses a key it does not know.
	_, priv, _ := ed25519Key(t)
	var seen string
	_, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{
		User: "000000000000", Auth: []ssh.AuthMethod{ssh.PublicKeys(priv)},
		HostKeyCallback: func(_ string, _ net.Addr, k ssh.PublicKey) error {
			seen = ssh.FingerprintSHA256(k)
			return nil
		},
	})
	if err == nil || !strings.Contains(err.Error(), "unable to authenticate") || seen != fingerprint {
		t.Fatalf("dial: %v (host key %s, want %s)", err, seen, fingerprint)
	}

	// The API tells where it is.
	key := keyRE.FindString(out.String())
	req, _ := http.NewRequest("GET", url+"/api/v1/ssh", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var info client.SSHInfo
	err = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || info.Address != addr || info.Fingerprint != fingerprint || !strings.HasPrefix(info.HostKey, "ssh-ed25519 ") {
		t.Fatalf("GET /api/v1/ssh: %d %+v %v", resp.StatusCode, info, err)
	}

	stop()
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("the gateway still listens after shutdown")
	}

	// A restart keeps the host key.
	_, out, _ = serve(t, cfg)
	if m := sshLineRE.FindStringSubmatch(out.String()); m == nil || m[2] != fingerprint {
		t.Fatalf("after a restart: %q, want host key %s", out, fingerprint)
	}
}

// TestSSHBusyPort: a busy ssh_listen fails the start before the admin key
// is made, the default one too (another installation on the host has it),
// with a message that names the setting to change; "off" turns the
// gateway off.
func TestSSHBusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := filepath.Join(t.TempDir(), "data")
	cfg := testConfig(t, dir, "127.0.0.1:0")
	cfg.SSHListen = busy.Addr().String()
	var out bytes.Buffer
	err = server.Run(t.Context(), cfg, slog.New(slog.DiscardHandler), &out)
	if err == nil || !strings.Contains(err.Error(), "ssh gateway: listen on "+cfg.SSHListen) || keyRE.MatchString(out.String()) {
		t.Fatalf("a start on a busy ssh_listen = %v\n%s", err, out.String())
	}

	// The default address, busy (by this test, or by anything else).
	if l, err := net.Listen("tcp", config.DefaultSSHListen); err == nil {
		defer l.Close()
	} else if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatal(err)
	}
	cfg.SSHListen = ""
	out.Reset()
	err = server.Run(t.Context(), cfg, slog.New(slog.DiscardHandler), &out)
	want := "ssh gateway: listen on " + config.DefaultSSHListen + ": listen tcp " + config.DefaultSSHListen +
		": bind: address already in use (another installation?): set ssh_listen / PADDOCK_SSH_LISTEN to another address, or \"off\""
	if err == nil || err.Error() != want || keyRE.MatchString(out.String()) {
		t.Fatalf("a start on the busy default SSH port = %v, want %q\n%s", err, want, out.String())
	}

	cfg.SSHListen = "off"
	_, printed, _ := serve(t, cfg)
	if sshLineRE.MatchString(printed.String()) {
		t.Fatalf("the gateway served while off:\n%s", printed)
	}
}

func ed25519Key(t *testing.T) (ssh.PublicKey, ssh.Signer, error) {
	t.Helper()
	priv, _, err := client.GenerateSSHKey("")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.ParsePrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s.PublicKey(), s, nil
}
