package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// versionSuffix follows every stand-in's version string.
const versionSuffix = " (paddock stand-in)"

// flagSpec describes the flags one CLI accepts: each name (with its dashes)
// maps to whether it takes a value.
type flagSpec map[string]bool

// parsed is a command line split into flags and positionals.
type parsed struct {
	flags map[string][]string // canonical name → values ("" for booleans)
	pos   []string
}

func (p *parsed) has(name string) bool { _, ok := p.flags[name]; return ok }

func (p *parsed) value(name string) string {
	v := p.flags[name]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// errUnknownFlag is returned with the offending argument.
type errUnknownFlag struct{ arg string }

func (e errUnknownFlag) Error() string { return "unknown flag " + e.arg }

// errMissingValue is returned when a value flag ends the command line.
type errMissingValue struct{ arg string }

func (e errMissingValue) Error() string { return "missing value for " + e.arg }

// parseArgs parses args against spec. aliases maps other spellings to a
// canonical name. "--flag=value" and "--flag value" both work; "--" ends the
// flags. optional names value flags whose value may be left out (gemini's
// --resume).
func parseArgs(args []string, spec flagSpec, aliases map[string]string, optional map[string]bool) (*parsed, error) {
	p := &parsed{flags: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			p.pos = append(p.pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			p.pos = append(p.pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		if c, ok := aliases[name]; ok {
			name = c
		}
		takes, ok := spec[name]
		if !ok {
			return nil, errUnknownFlag{a}
		}
		switch {
		case !takes:
			val = ""
		case hasVal:
		case i+1 < len(args) && !(optional[name] && strings.HasPrefix(args[i+1], "-")):
			i++
			val = args[i]
		case optional[name]:
			val = ""
		default:
			return nil, errMissingValue{a}
		}
		p.flags[name] = append(p.flags[name], val)
	}
	return p, nil
}

// emitter writes one JSON value per line to stdout, without Go's HTML
// escaping (the real CLIs use JSON.stringify or serde, which do not escape
// <, > and &).
type emitter struct{ w *bufio.Writer }

func newEmitter() *emitter { return &emitter{w: bufio.NewWriter(os.Stdout)} }

func (e *emitter) emit(v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	_, _ = e.w.Write(buf.Bytes())
	_ = e.w.Flush()
}

// rawJSON marshals v without HTML escaping, for payloads that carry JSON
// as a string (tool arguments).
func rawJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(buf.String(), "\n")
}

// listDir is the turn's one tool call: ls -1 in dir, really executed. Only
// when there is no ls at all does it list the directory itself.
func listDir(dir string) (output string, exitCode int) {
	cmd := exec.Command("ls", "-1")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exitErr):
		return string(out), exitErr.ExitCode()
	}
	entries, rerr := os.ReadDir(dir)
	if rerr != nil {
		return rerr.Error() + "\n", 2
	}
	var b strings.Builder
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			b.WriteString(e.Name() + "\n")
		}
	}
	return b.String(), 0
}

func countLines(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

// The texts every stand-in says, so tests can look for them.

func firstText(prompt string) string {
	return "You asked: " + prompt + "\nI'll list the working directory first."
}

func mcpLine(names []string) string {
	if len(names) == 0 {
		return "mcp servers: (none)"
	}
	return "mcp servers: " + strings.Join(names, ",")
}

// finalText is the last assistant message of turn n; prev is the prompt of
// the turn before, if there was one.
func finalText(listing string, n int, prev string) string {
	s := fmt.Sprintf("The working directory has %d entries:\n%s", countLines(listing), strings.TrimRight(listing, "\n"))
	if prev != "" {
		s += "\nprevious prompt: " + prev
	}
	return s + fmt.Sprintf("\nturn %d", n)
}

func wantsFailure(prompt string) bool { return strings.Contains(prompt, "[fail]") }

// anyEnv returns the first of names set to a non-empty value.
func anyEnv(names ...string) string {
	for _, n := range names {
		if os.Getenv(n) != "" {
			return n
		}
	}
	return ""
}

func homeDir() string {
	if h := os.Getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

func cwd() string {
	d, err := os.Getwd()
	if err != nil {
		return "."
	}
	return d
}

// uuid4 is a random RFC 4122 version 4 UUID.
func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

// uuid7 is a time-ordered RFC 9562 version 7 UUID (Codex's thread ids).
func uuid7() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(time.Now().UnixMilli()))
	copy(b[0:6], ms[2:8])
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

func formatUUID(b [16]byte) string {
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func randHex(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func randBase62(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = base62[int(b[i])%len(base62)]
	}
	return string(b)
}

// mcpServerNames reads the names under key (a path of object keys) of the
// JSON file at path, sorted. A missing file gives nil, false.
func mcpServerNames(path string, key ...string) ([]string, bool) {
	entries, ok := mcpServerEntries(path, key...)
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, ok
}

// mcpServerEntries reads the objects under key of the JSON file at path, by
// name.
func mcpServerEntries(path string, key ...string) (map[string]map[string]any, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return nil, true
	}
	for _, k := range key {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	m, _ := v.(map[string]any)
	out := map[string]map[string]any{}
	for n, e := range m {
		entry, _ := e.(map[string]any)
		out[n] = entry
	}
	return out, true
}

// union merges sorted name lists.
func union(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, n := range l {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// appendJSONL appends values to a JSONL file, creating it and its directory.
func appendJSONL(path string, values ...any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	for _, v := range values {
		if _, err := io.WriteString(f, rawJSON(v)+"\n"); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// readJSONL decodes each line of a JSONL file into a generic map.
func readJSONL(path string) ([]map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, l := range bytes.Split(data, []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func nowISO() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

func fatalf(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	return 1
}

// obj is a JSON object that keeps its keys in the order written, as the
// real CLIs print them: obj{"type", "system", "subtype", "init"}.
type obj []any

func (o obj) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i := 0; i+1 < len(o); i += 2 {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := o[i].(string)
		buf.WriteString(strings.TrimSuffix(rawJSON(k), "\n"))
		buf.WriteByte(':')
		buf.WriteString(rawJSON(o[i+1]))
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// modelMarker in a prompt makes a stand-in call its model's host before it
// answers, as the real CLI does on every turn (the stand-ins otherwise talk
// to no network).
const modelMarker = "[model]"

// modelReach is how one CLI reaches its model's host: the host, and how it
// retries a failure.
type modelReach struct {
	host string
	// retries after the first try (0: for half an hour), each announced
	// to onRetry (nil: silently) with the delay before it.
	retries int
	onRetry func(attempt int, delay time.Duration)
	// giveUp says which proxy answers the CLI does not retry.
	giveUp func(status int) bool
}

// errProxyStatus is the proxy's answer to a CONNECT other than 200.
type errProxyStatus struct {
	code   int
	status string
	header http.Header
	body   string
}

func (e errProxyStatus) Error() string { return "the proxy answered " + e.status }

// reach opens a tunnel to the host's port 443 through the sandbox's egress
// proxy (HTTPS_PROXY), when the prompt asks for it, and closes it at once:
// nothing is sent to the host. A failure is retried with backoff as
// m says. Without a proxy it fails at once: the stand-in never dials out
// directly.
func (m modelReach) reach(prompt string) error {
	if !strings.Contains(prompt, modelMarker) {
		return nil
	}
	proxy := os.Getenv("HTTPS_PROXY")
	if proxy == "" {
		proxy = os.Getenv("https_proxy")
	}
	u, err := url.Parse(proxy)
	if proxy == "" || err != nil || u.Host == "" {
		return fmt.Errorf("Connection error: %s is not reachable (no HTTPS_PROXY)", m.host)
	}
	delay, deadline := 500*time.Millisecond, time.Now().Add(30*time.Minute)
	for attempt := 1; ; attempt++ {
		err := connectVia(u, net.JoinHostPort(m.host, "443"))
		var ps errProxyStatus
		switch {
		case err == nil:
			return nil
		case errors.As(err, &ps) && m.giveUp != nil && m.giveUp(ps.code):
			return err
		case m.retries > 0 && attempt > m.retries, time.Now().After(deadline):
			return fmt.Errorf("Connection error: %s: %w", m.host, err)
		}
		if m.onRetry != nil {
			m.onRetry(attempt, delay)
		}
		time.Sleep(delay)
		delay = min(2*delay, 32*time.Second)
	}
}

// connectVia asks the proxy at u for a tunnel to target.
func connectVia(u *url.URL, target string) error {
	c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	if u.User != nil {
		pass, _ := u.User.Password()
		req += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass)) + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		return err
	}
	res, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
		return errProxyStatus{res.StatusCode, res.Status, res.Header, string(body)}
	}
	return nil
}
