package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// tlsServer serves h over TLS on the host's loopback with a certificate
// for name from a CA of its own, and returns its port and the CA (PEM).
func tlsServer(t *testing.T, name string, h http.Handler) (int, []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test upstream CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}}}
	go srv.ServeTLS(l, "", "")
	t.Cleanup(func() { srv.Close() })
	return l.Addr().(*net.TCPAddr).Port, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

// TestSecretsEndToEnd runs secrets through the built binaries on real
// Docker networks, a real proxy and real TLS: a secret passed to start is
// injected as an environment variable; a brokered one bound to the runtime
// is only a placeholder inside the sandbox, which the proxy swaps for the
// value in an HTTPS request to its host; an unknown secret starts nothing.
// The runtime is then archived and restored. Afterwards neither value is in
// the server's logs (at debug level), its database files, any API answer,
// the container's configuration, the agent's log or the snapshot image.
func TestSecretsEndToEnd(t *testing.T) {
	t.Parallel() // most of it is waiting for the archive
	plainValue := "plain-" + uuid.NewString()
	brokeredValue := "sk-brokered-" + uuid.NewString()
	values := []string{plainValue, brokeredValue}

	var mu sync.Mutex
	var upstreamSaw []string
	port, upstreamCA := tlsServer(t, "api.model.test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		upstreamSaw = append(upstreamSaw, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+brokeredValue {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Write([]byte("authorized"))
	}))
	caFile := filepath.Join(t.TempDir(), "upstream-ca.pem")
	if err := os.WriteFile(caFile, upstreamCA, 0o600); err != nil {
		t.Fatal(err)
	}

	const key = "pdk_00000000000000000000000000000000000000000000e9e6"
	s, c := serveWithEgress(t, key,
		"PADDOCK_LOG_LEVEL=debug",
		"PADDOCK_EGRESS_HOSTS=api.model.test=127.0.0.1:"+strconv.Itoa(port),
		"PADDOCK_EGRESS_BROKER_PORTS="+strconv.Itoa(port),
		"PADDOCK_EGRESS_UPSTREAM_CA_FILE="+caFile,
	)
	instance, data := s.instance, s.dataDir
	ctx := t.Context()
	var answers []any // every API answer, checked for values at the end
	keep := func(v any, err error) {
		t.Helper()
		if err != nil {
			answers = append(answers, err.Error())
			return
		}
		answers = append(answers, v)
	}
	plain, err := c.CreateSecret(ctx, "acme", "dev", pc.CreateSecretRequest{Name: "plain", Env: "PLAIN_TOKEN", Value: plainValue})
	keep(plain, err)
	if err != nil {
		t.Fatal(err)
	}
	model, err := c.CreateSecret(ctx, "acme", "", pc.CreateSecretRequest{Name: "model", Env: "MODEL_API_KEY", Value: brokeredValue,
		Brokered: true, Hosts: []string{"api.model.test"}})
	keep(model, err)
	if err != nil {
		t.Fatal(err)
	}
	allowed := "api.model.test:" + strconv.Itoa(port)
	p, err := c.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: "agent", Runtime: &pc.RuntimeConfig{
		Image: testenv.DefaultImage, MemoryMB: 256, ArchiveAfterSeconds: 60,
		Network: &pc.NetworkPolicy{Mode: pc.NetworkProxy, Allow: []string{allowed}},
		Secrets: []string{"model"},
	}})
	if err != nil {
		t.Fatal(err)
	}

	// An unknown secret: 404, and nothing is created.
	_, err = c.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{SecretIDs: []string{"plain", "nope"}})
	keep(nil, err)
	if !pc.IsCode(err, "secret_not_found") {
		t.Fatalf("start with an unknown secret: %v", err)
	}
	if n := containers(t, instance); n != 0 {
		t.Fatalf("%d containers after a refused start", n)
	}

	rt, err := c.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{SecretIDs: []string{"plain"}})
	keep(rt, err)
	if err != nil {
		t.Fatal(err)
	}
	sh := func(script string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		res, err := c.Exec(ctx, "acme", "dev", p.RuntimeID, pc.ExecRequest{Argv: []string{"bash", "-c", script}})
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		return strings.TrimSpace(string(res.Stdout) + string(res.Stderr))
	}
	if got := sh(`printf %s "$PLAIN_TOKEN"`); got != plainValue {
		t.Fatalf("the injected secret: %q", got)
	}
	placeholder := sh(`printf %s "$MODEL_API_KEY"`)
	if placeholder != "paddock-brokered-"+model.ID {
		t.Fatalf("the brokered secret inside the sandbox: %q", placeholder)
	}
	call := `curl -sS -H "Authorization: Bearer $MODEL_API_KEY" https://` + allowed + `/v1/chat`
	if got := sh(call); got != "authorized" {
		t.Fatalf("a brokered call: %q", got)
	}
	// Nothing in the sandbox holds the brokered value: no process's
	// environment, no file the agent or the provider wrote.
	if got := sh(`cat /proc/[0-9]*/environ /.paddock/run/* 2>/dev/null | grep -c -- '` + brokeredValue + `' || true`); got != "0" {
		t.Fatalf("the brokered value is in the sandbox: %s", got)
	}
	ctr := containerOf(t, instance)
	if b, err := exec.Command("docker", "inspect", ctr).Output(); err != nil || containsAny(b, values) {
		t.Fatalf("the container's configuration holds a value (or inspect failed: %v)", err)
	}
	if b, err := exec.Command("docker", "logs", ctr).CombinedOutput(); err != nil || containsAny(b, values) {
		t.Fatalf("the agent's log holds a value (or docker logs failed: %v)", err)
	}

	// Decisions are written in batches: wait for the brokered call's.
	var log pc.List[pc.EgressDecision]
	testenv.WaitFor(t, "a decision in the egress log", func() bool {
		log, err = c.ListEgress(ctx, "acme", "dev", p.RuntimeID, pc.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(log.Items) > 0
	})
	keep(log, nil)
	if len(log.Items) == 0 || !log.Items[0].Brokered || !log.Items[0].Allowed {
		t.Fatalf("egress log: %+v", log.Items)
	}

	// Archive: paused for a minute, the runtime is snapshotted.
	if _, err := c.PauseRuntime(ctx, "acme", "dev", p.RuntimeID); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		rt, err = c.GetRuntime(ctx, "acme", "dev", p.RuntimeID)
		if err != nil {
			t.Fatal(err)
		}
		if rt.Status != pc.RuntimeArchived {
			return fmt.Errorf("not archived: %+v", rt)
		}
		return nil
	})
	keep(rt, nil)
	out, err := exec.Command("docker", "images", "-q", "--filter", "label="+provider.LabelInstance+"="+instance, "paddock/archive").Output()
	if err != nil || len(bytes.Fields(out)) != 1 {
		t.Fatalf("snapshot images: %q %v", out, err)
	}
	snap := string(bytes.Fields(out)[0])
	saved, err := exec.Command("docker", "save", snap).Output()
	if err != nil {
		t.Fatal(err)
	}
	if containsAny(saved, values) {
		t.Fatal("the snapshot image holds a secret value")
	}

	// Restored by the next operation: the bound secret is there again.
	if got := sh(call); got != "authorized" {
		t.Fatalf("a brokered call after restore: %q", got)
	}
	sbs, err := c.ListSandboxes(ctx, "acme", pc.SandboxFilter{})
	keep(sbs, err)
	secretsList, err := c.ListSecrets(ctx, "acme", "dev", pc.ListOptions{})
	keep(secretsList, err)

	mu.Lock()
	for _, h := range upstreamSaw {
		if h != "Bearer "+brokeredValue {
			t.Errorf("the upstream saw %q", h)
		}
	}
	mu.Unlock()
	s.stop(t)
	for _, a := range answers {
		b, _ := json.Marshal(a)
		if containsAny(b, values) {
			t.Fatalf("an API answer holds a value: %s", b)
		}
	}
	if containsAny([]byte(s.logs.String()), values) {
		t.Fatal("the server's log holds a secret value")
	}
	if !bytes.Contains([]byte(s.logs.String()), []byte(`"level":"DEBUG"`)) {
		t.Fatal("the server did not log at debug level; the check above saw nothing")
	}
	for _, f := range []string{"paddock.db", "paddock.db-wal"} {
		b, err := os.ReadFile(filepath.Join(data, f))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if containsAny(b, values) {
			t.Fatalf("%s holds a secret value in the clear", f)
		}
	}
}

func containsAny(b []byte, values []string) bool {
	for _, v := range values {
		if bytes.Contains(b, []byte(v)) {
			return true
		}
	}
	return false
}

// containers counts the containers of an installation.
func containers(t *testing.T, instance string) int {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+provider.LabelInstance+"="+instance).Output()
	if err != nil {
		t.Fatal(err)
	}
	return len(bytes.Fields(out))
}

// containerOf is the one container of an installation.
func containerOf(t *testing.T, instance string) string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+provider.LabelInstance+"="+instance).Output()
	if err != nil || len(bytes.Fields(out)) != 1 {
		t.Fatalf("containers of %s: %q %v", instance, out, err)
	}
	return string(bytes.Fields(out)[0])
}
