// Command webserver is the web app the preview tests run inside a sandbox:
// a page with a script (for the browser test), server-sent events, a
// WebSocket echo, an upload that answers its SHA-256, and a download of n
// bytes. It is built by the tests and copied into the sandbox.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"strconv"
	"sync"

	"github.com/coder/websocket"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()

	release := make(chan struct{})
	var once sync.Once
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><html><head><title>sandbox app</title><script src="/app.js"></script></head><body>hello from the sandbox (%s %s)</body></html>`, r.Proto, r.Host)
	})
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		// Tells the embedding page the app's script loaded (which needs
		// the preview cookie in an iframe).
		fmt.Fprint(w, `parent.postMessage("app loaded: " + document.title, "*");`)
	})
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "data: two\n\n")
	})
	mux.HandleFunc("GET /release", func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(release) })
		fmt.Fprintln(w, "released")
	})
	mux.HandleFunc("GET /ws", wsEcho)
	mux.HandleFunc("POST /upload", upload)
	mux.HandleFunc("GET /download", download)
	mux.HandleFunc("GET /setcookie", func(w http.ResponseWriter, r *http.Request) {
		// An app trying to set paddock's cookie, and its own.
		http.SetCookie(w, &http.Cookie{Name: "paddock_preview", Value: "planted", Path: "/"})
		http.SetCookie(w, &http.Cookie{Name: "app", Value: "1", Path: "/"})
		fmt.Fprintln(w, "set")
	})
	mux.HandleFunc("GET /setcookies", setCookies)
	mux.HandleFunc("GET /whoami", func(w http.ResponseWriter, r *http.Request) {
		// What reached the app: paddock's own credentials must not.
		fmt.Fprintf(w, "auth=%q cookie=%q token=%q host=%q\n", r.Header.Get("Authorization"), r.Header.Get("Cookie"), r.URL.Query().Get("token"), r.Host)
	})
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{Addr: *addr, Handler: mux, Protocols: &protos}
	log.Fatal(srv.ListenAndServe())
}

// wsEcho accepts a WebSocket and echoes each message back, prefixed.
func wsEcho(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer c.CloseNow()
	for {
		typ, b, err := c.Read(r.Context())
		if err != nil {
			return
		}
		if err := c.Write(r.Context(), typ, append([]byte("echo: "), b...)); err != nil {
			return
		}
	}
}

// upload answers the size and SHA-256 of the body.
func upload(w http.ResponseWriter, r *http.Request) {
	h := sha256.New()
	n, err := io.Copy(h, r.Body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	fmt.Fprintf(w, "%d %s\n", n, hex.EncodeToString(h.Sum(nil)))
}

// download answers ?bytes=N zero bytes.
func download(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.ParseInt(r.URL.Query().Get("bytes"), 10, 64)
	if err != nil || n < 0 {
		http.Error(w, "bytes=N", 400)
		return
	}
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	buf := make([]byte, 256<<10)
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := w.Write(buf[:k]); err != nil {
			return
		}
		n -= k
	}
}

// setCookies plants cookies that browsers read as paddock's, and the app's
// own.
func setCookies(w http.ResponseWriter, r *http.Request) {
	// Spellings of paddock's cookies that browsers read as them (the
	// name trimmed of spaces and tabs, a nameless cookie sent back as
	// its value, which a server reads as name=value), one in another
	// case, and the app's own.
	for _, l := range []string{
		"paddock_preview =planted-space; Path=/",
		"paddock_preview\t=planted-tab; Path=/",
		"paddock_preview_p  =planted-partitioned; Path=/",
		"PADDOCK_PREVIEW=planted-case; Path=/",
		"paddock_preview; Path=/",
		"=paddock_preview=planted-nameless; Path=/",
		" = paddock_preview_p=planted-nameless-partitioned; Path=/",
		"app=1; Path=/",
		"app_two =2; Path=/",
	} {
		w.Header().Add("Set-Cookie", l)
	}
	fmt.Fprintln(w, "set")
}
