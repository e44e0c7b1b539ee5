package browser

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestUploadListsFile uploads a file through the files tab's file input
// and sees it listed, and the runtime holds its bytes.
func TestUploadListsFile(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1")
	id := f.runtimes["p1"]
	s.startRuntime(t, f, "p1")
	local := filepath.Join(t.TempDir(), "greeting.txt")
	if err := os.WriteFile(local, []byte("hello from the browser\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newTab(t, s.url)
	p.signIn(s.key)
	p.open(f.path("runtimes/" + id + "/files"))
	p.waitFor("the files table", `document.querySelector('table[aria-label="Files"]') !== null`)
	if got := eval[string](p, accName+`(document.getElementById("file-upload"))`); got != "Upload files" {
		t.Errorf("the upload input's accessible name is %q, want %q", got, "Upload files")
	}
	p.do("choose the file", chromedp.SetUploadFiles(chromedp.ID("file-upload"), []string{local}))
	p.waitFor("greeting.txt listed", `document.querySelector('table[aria-label="Files"] tr[data-name="greeting.txt"]') !== null`)

	// The files tab opens on the runtime's workspace, /workspace; the
	// bytes there are the file's.
	r, err := s.sdk.ReadFile(t.Context(), f.org, f.ws, id, "/workspace/greeting.txt")
	if err != nil {
		t.Fatalf("read the uploaded file: %v", err)
	}
	defer r.Close()
	if got, err := io.ReadAll(r); err != nil || string(got) != "hello from the browser\n" {
		t.Fatalf("the uploaded file holds %q (%v)", got, err)
	}
}
