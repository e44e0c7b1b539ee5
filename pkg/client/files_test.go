package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/pkg/client"
)

// TestWriteFileSendsAFileWithItsLength checks that a regular file is sent
// with its remaining length, not in chunks (so that the transport can hand
// it to sendfile), and that any other reader is still sent whole.
func TestWriteFileSendsAFileWithItsLength(t *testing.T) {
	type got struct {
		length  int64
		chunked bool
		body    string
	}
	var last got
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		last = got{length: r.ContentLength, chunked: len(r.TransferEncoding) > 0, body: string(b)}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"path":"/workspace/f","name":"f","type":"file"}`)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "pdk_test")
	if err != nil {
		t.Fatal(err)
	}
	const content = "0123456789abcdefghij"
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	upload := func(r io.Reader) got {
		t.Helper()
		if _, err := c.WriteFile(context.Background(), "acme", "dev", rtID, "/workspace/f", r, client.WriteFileOptions{}); err != nil {
			t.Fatal(err)
		}
		return last
	}
	open := func(offset int64) *os.File {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name string
		r    io.Reader
		want got
	}{
		{"file", open(0), got{length: 20, body: content}},
		{"file read from an offset", open(5), got{length: 15, body: content[5:]}},
		{"file read to its end", open(20), got{length: -1, chunked: true}},
		{"other reader", io.MultiReader(strings.NewReader(content)), got{length: -1, chunked: true, body: content}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if g := upload(tc.r); g != tc.want {
				t.Fatalf("sent %+v, want %+v", g, tc.want)
			}
		})
	}
}
