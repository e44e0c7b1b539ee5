package snapshot

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/errdefs"
)

// CodeDestinationRefused refuses a snapshot destination: its endpoint is
// not a URL paddock can use, resolves to an internal address the
// installation did not allow, or has no such bucket.
const CodeDestinationRefused = "snapshot_destination_refused"

// S3Config is an S3-compatible bucket to keep snapshots in.
type S3Config struct {
	// Endpoint is the service's URL, http:// or https://, host and port
	// only.
	Endpoint  string
	Bucket    string
	Region    string
	AccessKey string
	SecretKey string
	// AllowInternal lets Endpoint resolve to an internal address
	// (loopback, link-local, private ranges, the host's own): the
	// installation says so explicitly for an endpoint of its own.
	AllowInternal bool
	// Resolve looks up the endpoint's host; nil is the system's resolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// OrgCredentials, when set, replaces AccessKey and SecretKey: each
	// org's artifacts (keys "<org id>/…") are read and written with the
	// credentials it returns for that org (its own secrets'), looked up
	// at each use. The bucket is then not checked at start, having no
	// credentials of its own.
	OrgCredentials func(ctx context.Context, orgID string) (accessKey, secretKey string, err error)
}

// S3 keeps artifacts as objects of one bucket. Its endpoint's host was
// resolved once, when it was made, and checked; every request connects to
// that address, so a name that later resolves elsewhere (DNS rebinding)
// reaches nothing new.
type S3 struct {
	client *minio.Client // with the installation's credentials
	bucket string
	addr   netip.AddrPort
	// orgCreds and what a client per org is made with, when each org
	// brings its own credentials.
	orgCreds func(ctx context.Context, orgID string) (string, string, error)
	host     string
	opts     minio.Options
}

var _ Destination = (*S3)(nil)

// NewS3 validates c, resolves its endpoint once and checks that the bucket
// exists. A refused destination is 400 snapshot_destination_refused.
func NewS3(ctx context.Context, c S3Config) (*S3, error) {
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, refused("endpoint %q is not an http:// or https:// URL of a host and port", c.Endpoint)
	}
	if c.Bucket == "" {
		return nil, refused("a bucket is required")
	}
	addr, err := resolveOnce(ctx, u, c)
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr.String())
		},
		ForceAttemptHTTP2: true, TLSHandshakeTimeout: 30 * time.Second, MaxIdleConnsPerHost: 8,
	}
	opts := minio.Options{Secure: u.Scheme == "https", Region: c.Region, Transport: tr, BucketLookup: minio.BucketLookupPath}
	withCreds := opts
	withCreds.Creds = credentials.NewStaticV4(c.AccessKey, c.SecretKey, "")
	mc, err := minio.New(u.Host, &withCreds)
	if err != nil {
		return nil, refused("endpoint %q: %v", c.Endpoint, err)
	}
	if c.OrgCredentials != nil {
		return &S3{client: mc, bucket: c.Bucket, addr: addr, orgCreds: c.OrgCredentials, host: u.Host, opts: opts}, nil
	}
	ok, err := mc.BucketExists(ctx, c.Bucket)
	if err != nil {
		return nil, errdefs.Unavailable(CodeDestinationRefused, "snapshot bucket %q at %s did not answer: %v", c.Bucket, c.Endpoint, err).WithCause(err)
	}
	if !ok {
		return nil, refused("bucket %q does not exist at %s", c.Bucket, c.Endpoint)
	}
	return &S3{client: mc, bucket: c.Bucket, addr: addr}, nil
}

// resolveOnce resolves u's host and returns the address every request
// connects to: each address the name has must be public, or the
// installation must allow internal ones.
func resolveOnce(ctx context.Context, u *url.URL, c S3Config) (netip.AddrPort, error) {
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return netip.AddrPort{}, refused("endpoint %q has no valid port", c.Endpoint)
		}
		port = n
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, ok := parseHostAddr(host); ok {
		addrs = []netip.Addr{a}
	} else {
		resolve := c.Resolve
		if resolve == nil {
			resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
				return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
			}
		}
		var err error
		if addrs, err = resolve(ctx, host); err != nil || len(addrs) == 0 {
			return netip.AddrPort{}, refused("endpoint host %q does not resolve", host)
		}
	}
	guard := egress.NewGuard(egress.GuardConfig{})
	for _, a := range addrs {
		if why := guard.Closed(a); why != "" && !c.AllowInternal {
			return netip.AddrPort{}, refused("endpoint %q resolves to %s (%s); an installation allows an internal endpoint of its own explicitly (snapshots_s3_allow_internal)", c.Endpoint, a, why)
		}
	}
	return netip.AddrPortFrom(addrs[0].Unmap(), uint16(port)), nil
}

// parseHostAddr reads a literal address, in any form a URL parser takes.
func parseHostAddr(host string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true
	}
	return egress.ParseIPv4(host)
}

func refused(format string, args ...any) error {
	return errdefs.InvalidArgument(CodeDestinationRefused, "snapshot destination: "+format, args...)
}

// Name is "s3".
func (s *S3) Name() string { return "s3" }

// Addr is the address every request connects to.
func (s *S3) Addr() netip.AddrPort { return s.addr }

// Put uploads r as the object key (in parts: its size is not known).
func (s *S3) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	mc, err := s.clientFor(ctx, key)
	if err != nil {
		return 0, err
	}
	info, err := mc.PutObject(ctx, s.bucket, key, r, -1, minio.PutObjectOptions{
		ContentType: "application/gzip",
		// Signed headers, unsigned payload: the body is streamed once,
		// as it is written, in plain chunks any S3 service reads.
		DisableContentSha256: true,
	})
	if err != nil {
		return 0, fmt.Errorf("put snapshot object: %w", err)
	}
	return info.Size, nil
}

// Get opens the object key.
func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	mc, err := s.clientFor(ctx, key)
	if err != nil {
		return nil, err
	}
	obj, err := mc.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err == nil {
		_, err = obj.Stat()
	}
	if err != nil {
		if obj != nil {
			_ = obj.Close()
		}
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil, errdefs.NotFound(CodeArtifactMissing, "the snapshot's artifact is missing from its destination").WithCause(err)
		}
		return nil, fmt.Errorf("get snapshot object: %w", err)
	}
	return obj, nil
}

// Delete removes the object key; a missing one is no error.
func (s *S3) Delete(ctx context.Context, key string) error {
	mc, err := s.clientFor(ctx, key)
	if err != nil {
		return err
	}
	if err := mc.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("delete snapshot object: %w", err)
	}
	return nil
}

// CodeCredentialsMissing: the bucket takes each org's credentials from
// its secrets, and the org lacks one of them.
const CodeCredentialsMissing = "snapshot_credentials_missing"

// clientFor is the client key's artifact is read and written with: the
// installation's, or one with the credentials of the org key belongs to.
func (s *S3) clientFor(ctx context.Context, key string) (*minio.Client, error) {
	if s.orgCreds == nil {
		return s.client, nil
	}
	org, _, ok := strings.Cut(key, "/")
	if !ok || org == "" {
		return nil, fmt.Errorf("snapshot key %q names no org", key)
	}
	ak, sk, err := s.orgCreds(ctx, org)
	if errdefs.IsNotFound(err) {
		return nil, errdefs.FailedPrecondition(CodeCredentialsMissing, "the snapshot bucket takes its credentials from the org's secrets: %s",
			errdefs.PublicMessage(err, "one is missing")).WithCause(err)
	}
	if err != nil {
		return nil, err
	}
	opts := s.opts
	opts.Creds = credentials.NewStaticV4(ak, sk, "")
	return minio.New(s.host, &opts)
}
