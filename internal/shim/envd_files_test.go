package shim

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	fspb "github.com/paddockhq/paddock/internal/agentpb/envd/filesystem"
)

// filesURL is /files with query's parameters (path, username).
func filesURL(query ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(query); i += 2 {
		v.Set(query[i], query[i+1])
	}
	return "http://agent/files?" + v.Encode()
}

// do sends req and returns the status and body.
func (a *fsAgent) do(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	res, err := a.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// wantFilesError fails unless the answer is envd's error body with code.
func wantFilesError(t *testing.T, what string, res *http.Response, body []byte, code int) {
	t.Helper()
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if res.StatusCode != code || json.Unmarshal(body, &e) != nil || e.Code != code || e.Message == "" ||
		res.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("%s: %d %s %q, want envd's %d error", what, res.StatusCode, res.Header.Get("Content-Type"), body, code)
	}
}

// upload sends req, an upload, and decodes its answer.
func (a *fsAgent) upload(t *testing.T, req *http.Request) []uploaded {
	t.Helper()
	res, body := a.do(t, req)
	var out []uploaded
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil {
		t.Fatalf("upload: %d %q", res.StatusCode, body)
	}
	return out
}

// form is a multipart body with a "file" part per name (its filename)
// and data, plus a field the agent ignores.
func form(t *testing.T, files ...string) (string, *bytes.Buffer) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	must(t, mw.WriteField("note", "ignored"))
	for i := 0; i+1 < len(files); i += 2 {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, files[i]))
		h.Set("Content-Type", "application/octet-stream")
		pw, err := mw.CreatePart(h)
		must(t, err)
		_, _ = pw.Write([]byte(files[i+1]))
	}
	must(t, mw.Close())
	return mw.FormDataContentType(), &b
}

func post(t *testing.T, u, contentType string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, body)
	must(t, err)
	req.Header.Set("Content-Type", contentType)
	return req
}

func get(t *testing.T, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	must(t, err)
	return req
}

func TestEnvdFsHealth(t *testing.T) {
	a := startFsAgent(t)
	res, body := a.do(t, get(t, "http://agent/health"))
	if res.StatusCode != http.StatusNoContent || len(body) != 0 || res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("health: %d %v %q", res.StatusCode, res.Header, body)
	}
}

func TestEnvdFsUpload(t *testing.T) {
	a := startFsAgent(t)

	// One file at the query's path (the SDK's write(path, data)).
	ct, body := form(t, "ignored-name", "hello")
	out := a.upload(t, (post(t, filesURL("path", "docs/a.txt"), ct, body)))
	want := filepath.Join(a.home, "docs/a.txt")
	if len(out) != 1 || out[0].Path != want || out[0].Name != "a.txt" || out[0].Type != "file" || out[0].Metadata != nil {
		t.Errorf("answer %v", out)
	}
	if b, _ := os.ReadFile(want); string(b) != "hello" || ownerOf(t, want) != 1000 || ownerOf(t, filepath.Dir(want)) != 1000 {
		t.Errorf("%s: %q owned by %d", want, b, ownerOf(t, want))
	}

	// Several files, each at its part's filename (writeFiles).
	ct, body = form(t, "many/one.txt", "1", filepath.Join(a.home, "many/two/two.txt"), "22", "~/three.txt", "333")
	out = a.upload(t, (post(t, filesURL(), ct, body)))
	wantPaths := []string{filepath.Join(a.home, "many/one.txt"), filepath.Join(a.home, "many/two/two.txt"), filepath.Join(a.home, "three.txt")}
	for i, p := range wantPaths {
		if i >= len(out) || out[i].Path != p {
			t.Fatalf("answer %v, want paths %v", out, wantPaths)
		}
		if b, _ := os.ReadFile(p); len(b) != i+1 {
			t.Errorf("%s holds %q", p, b)
		}
	}

	// An octet-stream body (envd ≥ 0.5.7), plain and gzip; it replaces the
	// file and keeps its mode.
	must(t, os.Chmod(want, 0o600))
	out = a.upload(t, (post(t, filesURL("path", want), "application/octet-stream", strings.NewReader("raw"))))
	if b, _ := os.ReadFile(want); string(b) != "raw" || len(out) != 1 || out[0].Path != want {
		t.Errorf("octet-stream: %q, %v", b, out)
	}
	if fi, _ := os.Stat(want); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after an overwrite", fi.Mode())
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("zipped"))
	must(t, zw.Close())
	req := post(t, filesURL("path", "z.txt"), "application/octet-stream", &gz)
	req.Header.Set("Content-Encoding", "gzip")
	a.upload(t, req)
	if b, _ := os.ReadFile(filepath.Join(a.home, "z.txt")); string(b) != "zipped" {
		t.Errorf("gzip upload wrote %q", b)
	}

	// As root, by the query or by the header.
	a.upload(t, (post(t, filesURL("path", "r.txt", "username", "root"), "application/octet-stream", strings.NewReader("r"))))
	if p := filepath.Join(a.root, "r.txt"); ownerOf(t, p) != 0 {
		t.Errorf("root's upload owned by %d", ownerOf(t, p))
	}
	req = post(t, filesURL("path", "/opt-envd-test-not-here/../"+filepath.Join(a.root, "h.txt")), "application/octet-stream", strings.NewReader("h"))
	req.Header.Set("Authorization", "Basic cm9vdDo=") // root:
	a.upload(t, req)
	if p := filepath.Join(a.root, "h.txt"); ownerOf(t, p) != 0 {
		t.Errorf("upload as root (header) owned by %d", ownerOf(t, p))
	}
}

// TestEnvdFsMetadata: an upload's X-Metadata-* headers become the file's
// metadata, which its entry shows; each upload replaces them.
func TestEnvdFsMetadata(t *testing.T) {
	a := startFsAgent(t)
	upload := func(meta ...string) []uploaded {
		t.Helper()
		req := post(t, filesURL("path", "m.txt"), "application/octet-stream", strings.NewReader("m"))
		for i := 0; i+1 < len(meta); i += 2 {
			req.Header.Add("X-Metadata-"+meta[i], meta[i+1])
		}
		return a.upload(t, req)
	}
	stat := func() map[string]string {
		t.Helper()
		res, err := a.fs.Stat(context.Background(), as("", &fspb.StatRequest{Path: "m.txt"}))
		must(t, err)
		return res.Msg.Entry.Metadata
	}
	out := upload("Owner", "team-a", "build-ID", "42", "owner", "second")
	want := map[string]string{"owner": "team-a", "build-id": "42"}
	if len(out) != 1 || !maps.Equal(out[0].Metadata, want) {
		t.Fatalf("answer %v, want metadata %v", out, want)
	}
	if got := stat(); !maps.Equal(got, want) {
		t.Errorf("stat: metadata %v, want %v", got, want)
	}
	upload("kind", "x")
	if got := stat(); !maps.Equal(got, map[string]string{"kind": "x"}) {
		t.Errorf("after a second upload: %v", got)
	}
	// Multipart: every file gets the request's metadata.
	ct, body := form(t, "m1.txt", "1", "m2.txt", "2")
	req := post(t, filesURL(), ct, body)
	req.Header.Set("X-Metadata-Batch", "7")
	for _, u := range a.upload(t, req) {
		if !maps.Equal(u.Metadata, map[string]string{"batch": "7"}) {
			t.Errorf("%s: metadata %v", u.Path, u.Metadata)
		}
	}
	upload()
	if got := stat(); got != nil {
		t.Errorf("an upload without metadata left %v", got)
	}

	for name, h := range map[string][2]string{
		"a key too long":      {"X-Metadata-" + strings.Repeat("k", 250), "v"},
		"a value not ASCII":   {"X-Metadata-K", "caf\u00e9"},
		"too much altogether": {"X-Metadata-Big", strings.Repeat("v", 5000)},
	} {
		req := post(t, filesURL("path", "bad.txt"), "application/octet-stream", strings.NewReader("b"))
		req.Header[h[0]] = []string{h[1]}
		res, body := a.do(t, req)
		wantFilesError(t, name, res, body, 400)
	}
	if _, err := os.Stat(filepath.Join(a.home, "bad.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused upload wrote its file: %v", err)
	}
}

func TestEnvdFsUploadErrors(t *testing.T) {
	a := startFsAgent(t)
	must(t, os.Mkdir(filepath.Join(a.home, "dir"), 0o755))
	writeFile(t, filepath.Join(a.root, "secret"), "s", 0o600, 0)
	for _, tt := range []struct {
		name string
		req  func() *http.Request
		code int
	}{
		{"no path for octet-stream", func() *http.Request {
			return post(t, filesURL(), "application/octet-stream", strings.NewReader("x"))
		}, 400},
		{"unsupported content type", func() *http.Request {
			return post(t, filesURL("path", "x"), "text/plain", strings.NewReader("x"))
		}, 400},
		{"onto a directory", func() *http.Request {
			return post(t, filesURL("path", "dir"), "application/octet-stream", strings.NewReader("x"))
		}, 400},
		{"two parts, one path", func() *http.Request {
			ct, b := form(t, "same.txt", "1", "same.txt", "2")
			return post(t, filesURL(), ct, b)
		}, 400},
		{"bad gzip", func() *http.Request {
			r := post(t, filesURL("path", "g"), "application/octet-stream", strings.NewReader("not gzip"))
			r.Header.Set("Content-Encoding", "gzip")
			return r
		}, 400},
		{"a form cut short", func() *http.Request {
			ct, b := form(t, "cut.txt", strings.Repeat("x", 1000))
			return post(t, filesURL(), ct, bytes.NewReader(b.Bytes()[:b.Len()-600]))
		}, 400},
		{"unknown user", func() *http.Request {
			return post(t, filesURL("path", "x", "username", "bob"), "application/octet-stream", strings.NewReader("x"))
		}, 401},
		{"into root's home as user", func() *http.Request {
			return post(t, filesURL("path", filepath.Join(a.root, "secret")), "application/octet-stream", strings.NewReader("x"))
		}, 403},
	} {
		res, body := a.do(t, tt.req())
		wantFilesError(t, tt.name, res, body, tt.code)
	}
	if b, _ := os.ReadFile(filepath.Join(a.home, "same.txt")); string(b) != "1" {
		t.Errorf("the first of two parts for one path: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(a.root, "secret")); string(b) != "s" {
		t.Errorf("root's file now holds %q", b)
	}
	if _, err := os.Stat(filepath.Join(a.home, "cut.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cut upload left its file: %v", err)
	}
}

func TestEnvdFsDownload(t *testing.T) {
	a := startFsAgent(t)
	writeFile(t, filepath.Join(a.home, "d.txt"), "downloaded", 0o644, 1000)
	writeFile(t, filepath.Join(a.base, "rootonly"), "secret", 0o600, 0)

	req := get(t, filesURL("path", "d.txt"))
	req.Header.Set("Accept-Encoding", "identity")
	res, body := a.do(t, req)
	if res.StatusCode != 200 || string(body) != "downloaded" || res.ContentLength != 10 || res.Uncompressed {
		t.Errorf("download: %d %q %v", res.StatusCode, body, res.Header)
	}
	// Go's transport, like Node's fetch, asks for gzip itself and decodes it.
	if res, body := a.do(t, get(t, filesURL("path", "d.txt"))); string(body) != "downloaded" || !res.Uncompressed {
		t.Errorf("download, gzip by default: %d %q %v", res.StatusCode, body, res.Header)
	}
	req = get(t, filesURL("path", "~/d.txt"))
	req.Header.Set("Range", "bytes=2-5")
	if res, body := a.do(t, req); res.StatusCode != http.StatusPartialContent || string(body) != "wnlo" {
		t.Errorf("range: %d %q", res.StatusCode, body)
	}
	// gzip when accepted (the transport decodes it only when it asked).
	req = get(t, filesURL("path", "d.txt"))
	req.Header.Set("Accept-Encoding", "gzip")
	res, body = a.do(t, req)
	if res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("no gzip: %v", res.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	must(t, err)
	if b, _ := io.ReadAll(zr); string(b) != "downloaded" {
		t.Errorf("gzip body %q", b)
	}
	// root reads root's file; user may not.
	if res, body := a.do(t, get(t, filesURL("path", filepath.Join(a.base, "rootonly"), "username", "root"))); string(body) != "secret" {
		t.Errorf("root's download: %d %q", res.StatusCode, body)
	}
	res, body = a.do(t, get(t, filesURL("path", filepath.Join(a.base, "rootonly"))))
	wantFilesError(t, "user reads root's file", res, body, 403)
	res, body = a.do(t, get(t, filesURL("path", "missing.txt")))
	wantFilesError(t, "missing", res, body, 404)
	res, body = a.do(t, get(t, filesURL("path", "~")))
	wantFilesError(t, "a directory", res, body, 400)
	res, body = a.do(t, get(t, filesURL("path", "d.txt", "username", "nobody")))
	wantFilesError(t, "unknown user", res, body, 401)
}

// patterned is n bytes of a fixed pseudo-random stream, made as read.
type patterned struct {
	r *rand.ChaCha8
	n int64
}

func (p *patterned) Read(b []byte) (int, error) {
	if p.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.n {
		b = b[:p.n]
	}
	_, _ = p.r.Read(b)
	p.n -= int64(len(b))
	return len(b), nil
}

// heapPeak samples the heap in use until stop is called, which returns
// the largest sample.
func heapPeak() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// TestEnvdLargeFile uploads and downloads 160 MB, streamed both ways:
// the heap (the test's and the agent's, one process) stays far below the
// file's size.
func TestEnvdFsLargeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 160 MB")
	}
	a := startFsAgent(t)
	const size = 160 << 20
	seed := [32]byte{1, 2, 3}
	want := sha256.New()
	_, _ = io.Copy(want, &patterned{r: rand.NewChaCha8(seed), n: size})
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	const slack = 48 << 20

	stop := heapPeak()
	req := post(t, filesURL("path", "big.bin"), "application/octet-stream", &patterned{r: rand.NewChaCha8(seed), n: size})
	a.upload(t, req)
	if peak := stop(); peak > base+slack {
		t.Errorf("upload: heap peaked at %d MB over a base of %d MB", peak>>20, base>>20)
	}
	if fi, err := os.Stat(filepath.Join(a.home, "big.bin")); err != nil || fi.Size() != size {
		t.Fatalf("uploaded %v, %v", fi, err)
	}

	stop = heapPeak()
	res, err := a.http.Do(get(t, filesURL("path", "big.bin")))
	must(t, err)
	got := sha256.New()
	n, err := io.Copy(got, res.Body)
	res.Body.Close()
	if peak := stop(); peak > base+slack {
		t.Errorf("download: heap peaked at %d MB over a base of %d MB", peak>>20, base>>20)
	}
	if err != nil || n != size || !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Errorf("downloaded %d bytes (%v), digest match %v", n, err, bytes.Equal(got.Sum(nil), want.Sum(nil)))
	}
}

// swapReader, on its first read, runs swap and then fails, as a client
// that goes away mid-upload does.
type swapReader struct{ swap func() }

func (r swapReader) Read([]byte) (int, error) {
	r.swap()
	return 0, errors.New("the client went away")
}

// TestEnvdFsUploadCleanupStaysPut fails an upload after the user swapped
// the new file's parent for a link to root's directory: the cleanup
// removes the file it created from the directory it created it in, and
// never root's file of the same name the path now leads to.
func TestEnvdFsUploadCleanupStaysPut(t *testing.T) {
	a := startFsAgent(t)
	victim := filepath.Join(a.base, "etc")
	writeFile(t, filepath.Join(victim, "passwd"), "root:x:0:0", 0o644, 0)
	dir, moved := filepath.Join(a.home, "d"), filepath.Join(a.home, "d.old")
	src := swapReader{swap: func() {
		must(t, os.Rename(dir, moved))
		must(t, os.Symlink(victim, dir))
	}}
	err := writeUpload(sandboxUsers[UserDefault], filepath.Join(dir, "passwd"), src, nil)
	var re *rpcError
	if !errors.As(err, &re) || re.reason != "invalid_body" {
		t.Fatalf("upload: %v, want invalid_body", err)
	}
	if b, err := os.ReadFile(filepath.Join(victim, "passwd")); err != nil || string(b) != "root:x:0:0" {
		t.Fatalf("root's file: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(moved, "passwd")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file the upload created stayed: %v", err)
	}
}
