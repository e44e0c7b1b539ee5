package snapshot_test

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/snapshot"
	"github.com/paddockhq/paddock/internal/snapshot/s3test"
)

// resolver answers addrs for any name and counts its calls.
func resolver(calls *atomic.Int32, addrs *atomic.Pointer[[]netip.Addr]) func(context.Context, string) ([]netip.Addr, error) {
	return func(context.Context, string) ([]netip.Addr, error) {
		calls.Add(1)
		return *addrs.Load(), nil
	}
}

func wantRefused(t *testing.T, what string, err error) {
	t.Helper()
	pe, ok := errdefs.Public(err)
	if !errors.Is(err, errdefs.ErrInvalidArgument) || !ok || pe.Code != snapshot.CodeDestinationRefused {
		t.Fatalf("%s: err = %v, want 400 %s", what, err, snapshot.CodeDestinationRefused)
	}
}

// TestS3RefusesInternalEndpoints: an endpoint that is no plain http(s)
// URL, or whose address is internal (loopback, link-local and the
// metadata address, private ranges, the unspecified address, any literal
// form), is refused before anything is dialled, unless the installation
// allows internal endpoints.
func TestS3RefusesInternalEndpoints(t *testing.T) {
	var calls atomic.Int32
	var addrs atomic.Pointer[[]netip.Addr]
	private := []netip.Addr{netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("192.168.1.20")}
	addrs.Store(&private)
	for _, ep := range []string{
		"http://127.0.0.1:9000", "http://[::1]:9000", "http://169.254.169.254", "http://10.1.2.3:9000",
		"https://172.16.0.1", "http://0.0.0.0:9000", "http://0x7f000001:9000", "http://2130706433:9000",
		"http://[::ffff:127.0.0.1]:9000", "http://[fd00::1]:9000",
		"http://bucket.example:9000", // resolves to a public and a private address
	} {
		_, err := snapshot.NewS3(t.Context(), snapshot.S3Config{Endpoint: ep, Bucket: "b", Resolve: resolver(&calls, &addrs)})
		wantRefused(t, ep, err)
		if !strings.Contains(errdefs.PublicMessage(err, ""), "snapshots_s3_allow_internal") {
			t.Errorf("%s: the refusal does not say how to allow it: %v", ep, err)
		}
	}
	for _, ep := range []string{"ftp://host", "http://user:pw@host", "http://host/path", "http://host?x=1", "host:9000", "http://host:99999"} {
		_, err := snapshot.NewS3(t.Context(), snapshot.S3Config{Endpoint: ep, Bucket: "b", Resolve: resolver(&calls, &addrs)})
		wantRefused(t, ep, err)
	}
}

// TestS3RoundTrip: against a real S3-compatible server on loopback,
// allowed explicitly, an artifact is put, read back whole, found missing
// after its deletion; the name was resolved once and every request went
// to that address, even after the name moved (DNS rebinding); the same
// endpoint without the allowance is refused; a missing bucket is refused.
func TestS3RoundTrip(t *testing.T) {
	srv := s3test.Start(t, "snaps")
	port := netip.MustParseAddrPort(strings.TrimPrefix(srv.URL, "http://")).Port()
	var calls atomic.Int32
	var addrs atomic.Pointer[[]netip.Addr]
	loop := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	addrs.Store(&loop)
	cfg := snapshot.S3Config{
		Endpoint: "http://s3.test:" + itoa(port), Bucket: srv.Bucket, Region: "us-east-1",
		AccessKey: "key", SecretKey: "secret", Resolve: resolver(&calls, &addrs),
	}
	_, err := snapshot.NewS3(t.Context(), cfg)
	wantRefused(t, "loopback without the allowance", err)

	cfg.AllowInternal = true
	s3, err := snapshot.NewS3(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The name now points elsewhere (an address no request of this test
	// may reach, and none does: the client dials the address resolved).
	moved := []netip.Addr{netip.MustParseAddr("127.0.0.2")}
	addrs.Store(&moved)

	body := strings.Repeat("snapshot bytes ", 100_000)
	n, err := s3.Put(t.Context(), "org/one.tar.gz", strings.NewReader(body))
	if err != nil || n != int64(len(body)) {
		t.Fatalf("put: %d, %v", n, err)
	}
	r, err := s3.Get(t.Context(), "org/one.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != body {
		t.Fatalf("get: %d bytes, %v", len(got), err)
	}
	if err := s3.Delete(t.Context(), "org/one.tar.gz"); err != nil {
		t.Fatal(err)
	}
	if _, err := s3.Get(t.Context(), "org/one.tar.gz"); !errdefs.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want not found", err)
	}
	if err := s3.Delete(t.Context(), "org/one.tar.gz"); err != nil {
		t.Fatalf("delete twice: %v", err)
	}
	if c := calls.Load(); c != 2 || s3.Addr().Addr() != loop[0] {
		t.Fatalf("resolved %d times (want once per NewS3), connects to %s", c, s3.Addr())
	}

	addrs.Store(&loop)
	cfg.Bucket = "missing"
	_, err = snapshot.NewS3(t.Context(), cfg)
	wantRefused(t, "a missing bucket", err)
}

func itoa(p uint16) string {
	return strings.TrimSpace(strings.TrimLeft(netip.AddrPortFrom(netip.IPv4Unspecified(), p).String(), "0.:"))
}
