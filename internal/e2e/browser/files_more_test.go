package browser

import (
	"fmt"
	"io"
	"strings"
	"testing"

	pc "github.com/paddockhq/paddock/pkg/client"
)

// fileRow is the CSS selector of a row of the files table.
func fileRow(name string) string {
	return `table[aria-label="Files"] tr[data-name="` + name + `"]`
}

// pageFile is JavaScript making a File named name of the given bytes
// (size zero-bytes when text is empty) in the page.
func pageFile(name, text string, size int) string {
	if text != "" {
		return fmt.Sprintf(`new File([%s], %s, {type: "text/plain"})`, jsString(text), jsString(name))
	}
	return fmt.Sprintf(`new File([new Uint8Array(%d)], %s)`, size, jsString(name))
}

// chooseFile puts a page-made file into the upload input, as the file
// picker does, and tells the page it changed.
func (p *tab) chooseFile(file string) {
	p.t.Helper()
	eval[bool](p, `(() => {
		const dt = new DataTransfer();
		dt.items.add(`+file+`);
		const input = document.getElementById("file-upload");
		input.files = dt.files;
		input.dispatchEvent(new Event("change", {bubbles: true}));
		return true;
	})()`)
}

// TestFilesTab drives the files tab of a running runtime's page: a file
// dropped on the drop zone, a 100 MB upload with its progress rising, a
// directory made and entered, a download, a delete.
func TestFilesTab(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1")
	id := f.runtimes["p1"]
	s.startRuntime(t, f, "p1")
	p := newTab(t, s.url)
	p.signIn(s.key)
	p.open(f.path("runtimes/" + id + "/files"))
	p.waitFor("the files table", `document.querySelector('table[aria-label="Files"]') !== null`)
	read := func(t *testing.T, path string) string {
		t.Helper()
		r, err := s.sdk.ReadFile(t.Context(), f.org, f.ws, id, path)
		if err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	t.Run("drop", func(t *testing.T) {
		p := p.in(t)
		// A drag from the desktop: dragenter, dragover and drop on the
		// zone, carrying a file.
		eval[bool](p, `(() => {
			const dt = new DataTransfer();
			dt.items.add(`+pageFile("dropped.txt", "dropped on the zone\n", 0)+`);
			const zone = document.querySelector(".dropzone");
			for (const type of ["dragenter", "dragover", "drop"]) {
				zone.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: dt}));
			}
			return true;
		})()`)
		p.waitFor("dropped.txt listed", `document.querySelector(`+jsString(fileRow("dropped.txt"))+`) !== null`)
		if got := read(t, "/workspace/dropped.txt"); got != "dropped on the zone\n" {
			t.Errorf("the dropped file holds %q", got)
		}
	})

	t.Run("progress", func(t *testing.T) { uploadProgress(t, p.in(t), s, f, id) })

	t.Run("mkdir-download-delete", func(t *testing.T) { dirDownloadDelete(t, p.in(t), s, f, id) })
}

// dirDownloadDelete makes a directory, enters it, uploads a file there,
// downloads it and deletes it.
func dirDownloadDelete(t *testing.T, p *tab, s *server, f fleet, id string) {
	p.fill("mkdir-name", "reports")
	p.click("Make directory", button("Make directory"))
	p.waitFor("reports listed", `document.querySelector(`+jsString(fileRow("reports"))+`) !== null`)
	if fi, err := s.sdk.StatFile(t.Context(), f.org, f.ws, id, "/workspace/reports"); err != nil || fi.Type != "directory" {
		t.Fatalf("the API's /workspace/reports: %+v, %v", fi, err)
	}
	p.click("enter reports", `document.querySelector(`+jsString(fileRow("reports")+" th a")+`)`)
	p.waitFor("the breadcrumb at reports", `document.querySelector('nav[aria-label="Directory"] [aria-current]')?.textContent === "reports" && document.querySelector('table[aria-label="Files"] caption, table[aria-label="Files"]') !== null && !document.querySelector(`+jsString(fileRow("dropped.txt"))+`)`)
	if q := eval[string](p, `new URLSearchParams(location.search).get("path")`); q != "/workspace/reports" {
		t.Errorf("the URL's path is %q inside reports", q)
	}
	const note = "a note in reports\n"
	p.chooseFile(pageFile("note.txt", note, 0))
	p.waitFor("note.txt listed", `document.querySelector(`+jsString(fileRow("note.txt"))+`) !== null`)

	link := button("Download note.txt")
	got := eval[string](p, `fetch(`+link+`.href).then((r) => r.ok ? r.text() : "HTTP " + r.status)`)
	if got != note {
		t.Errorf("the download link answers %q, want %q", got, note)
	}
	if dl := eval[string](p, link+`.getAttribute("download")`); dl != "note.txt" {
		t.Errorf("the download link saves as %q", dl)
	}

	p.click("Delete note.txt", button("Delete note.txt"))
	p.waitFor("note.txt gone", `document.querySelector(`+jsString(fileRow("note.txt"))+`) === null && document.querySelector('table[aria-label="Files"]') !== null`)
	l, err := s.sdk.ListFiles(t.Context(), f.org, f.ws, id, "/workspace/reports", pc.ListFilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range l.Items {
		if it.Name == "note.txt" {
			t.Errorf("the API still lists note.txt after its delete")
		}
	}
}

// uploadProgress uploads a 100 MB file made in the page and samples its
// <progress> as it goes: the value rises below its maximum before it
// reaches it, and the sandbox holds 100 MB.
func uploadProgress(t *testing.T, p *tab, s *server, f fleet, id string) {
	const size = 100 << 20
	// The page samples the bar every few milliseconds, far more often
	// than an evaluation from here could.
	eval[bool](p, `(() => {
		window.__progress = [];
		window.__sampler = setInterval(() => {
			const bar = document.querySelector('li[data-upload="big.bin"] progress');
			if (bar) window.__progress.push([bar.value, bar.max]);
		}, 2);
		return true;
	})()`)
	p.chooseFile(pageFile("big.bin", "", size))
	p.waitFor("big.bin uploaded", `document.querySelector('li.upload-done[data-upload="big.bin"]') !== null && document.querySelector(`+jsString(fileRow("big.bin"))+`) !== null`)
	samples := eval[[][2]float64](p, `(() => { clearInterval(window.__sampler); return window.__progress; })()`)
	var below []float64
	for _, s := range samples {
		if s[1] != size {
			t.Fatalf("the bar's max is %v, want %d", s[1], size)
		}
		if s[0] > 0 && s[0] < size && (len(below) == 0 || s[0] > below[len(below)-1]) {
			below = append(below, s[0])
		}
	}
	if len(below) < 2 {
		t.Errorf("the bar showed %d rising values below its max (%v…), want at least 2", len(below), head(samples))
	}
	if last := samples[len(samples)-1]; last[0] != size {
		t.Errorf("the bar ends at %v, want %d", last[0], size)
	}
	fi, err := s.sdk.StatFile(t.Context(), f.org, f.ws, id, "/workspace/big.bin")
	if err != nil || fi.Size != size {
		t.Errorf("the sandbox's big.bin: %d bytes (%v), want %d", fi.Size, err, size)
	}
	if text := eval[string](p, `document.querySelector('li[data-upload="big.bin"]').textContent`); !strings.Contains(text, "100 MiB") {
		t.Errorf("the finished upload says %q", text)
	}
}

// head is the first few of xs, for a failure message.
func head[T any](xs []T) []T {
	if len(xs) > 10 {
		return xs[:10]
	}
	return xs
}
