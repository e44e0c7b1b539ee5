package cli_test

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/pkg/client"
)

// capabilityAPI is the fake API with the routes of capabilities,
// inventories, prompts and sessions added, in memory. Like fakeAPI it
// tests the CLI's encoding and output, not the server's behaviour.
type capabilityAPI struct {
	*fakeAPI

	catalog   []client.CapabilityVersion
	inventory []client.CapabilityVersion
	bindings  []*client.CapabilityBinding
	sessions  []*client.SessionTranscript
	// resolved answers GET …/capabilities/resolved.
	resolved client.ResolvedCapabilities
	// bundles holds each pushed bundle, in order; contentTypes their
	// Content-Type.
	bundles      [][]byte
	contentTypes []string
	// turn makes the events of a prompt or task, after the user's
	// message; refuse, when set, answers the turn with this error.
	turn   func(req client.PromptRequest) []client.SessionEvent
	refuse *client.Error
	// cut ends a streamed turn before its done event.
	cut bool
}

// startCapabilityAPI starts the fake with org acme, workspace dev and
// project agent, and returns it with an environment scoped to them.
func startCapabilityAPI(t *testing.T) (*capabilityAPI, map[string]string) {
	t.Helper()
	f := &fakeAPI{key: goodKey, bodies: map[string]string{}, queries: map[string]string{}}
	c := &capabilityAPI{fakeAPI: f, catalog: []client.CapabilityVersion{
		catalogVersion("browser", "1.0.0", "a browser for the agent", client.CapabilityContents{
			MCPServers: []string{"playwright"}, Workers: []string{"chromium"},
			Flags: []client.CapabilityFlag{{Name: "headless", Default: true}},
		}),
		catalogVersion("git", "1.0.0", "git tools", client.CapabilityContents{
			Skills: []string{"commit", "rebase"}, Checks: []string{"git"},
			Flags: []client.CapabilityFlag{{Name: "push"}, {Name: "fetch", Default: true}},
		}),
		catalogVersion("git", "1.1.0", "git tools", client.CapabilityContents{
			Skills: []string{"commit"},
			Flags:  []client.CapabilityFlag{{Name: "push"}, {Name: "fetch", Default: true}},
		}),
	}}
	mux := http.NewServeMux()
	c.routes(mux)
	mux.Handle("/", f.handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	env := clitest.Env(srv.URL, goodKey)
	clitest.MustRun(t, env, "org", "create", "acme")
	clitest.MustRun(t, env, "workspace", "create", "dev", "--org", "acme")
	env["PADDOCK_ORG"], env["PADDOCK_WS"] = "acme", "dev"
	clitest.MustRun(t, env, "project", "create", "agent")
	return c, env
}

func catalogVersion(name, version, desc string, contents client.CapabilityContents) client.CapabilityVersion {
	return client.CapabilityVersion{Source: client.SourceCatalog, Name: name, Version: version, Description: desc,
		Digest: "sha256:" + strings.Repeat("c", 64), SizeBytes: 100, Contents: contents}
}

func (c *capabilityAPI) routes(mux *http.ServeMux) {
	handle := func(pattern string, h func(w http.ResponseWriter, r *http.Request, body []byte)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+c.key {
				fail(w, 401, "invalid_api_key", "the API key is not valid")
				return
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			body, _ := io.ReadAll(r.Body)
			c.bodies[pattern] = ""
			if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
				c.bodies[pattern] = string(body)
			}
			c.queries[pattern] = r.URL.RawQuery
			h(w, r, body)
		})
	}
	const rt = "/api/v1/org/{org}/ws/{ws}/runtimes/{id}"

	handle("GET /api/v1/catalog", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		reply(w, 200, client.List[client.CapabilityVersion]{Items: c.catalog})
	})
	handle("GET /api/v1/org/{org}/capabilities", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if _, ok := c.orgOf(w, r); !ok {
			return
		}
		out := []client.CapabilityVersion{}
		for _, v := range c.inventory {
			if match(r.URL.Query().Get("name"), v.Name) {
				out = append(out, v)
			}
		}
		reply(w, 200, client.List[client.CapabilityVersion]{Items: out})
	})
	handle("POST /api/v1/org/{org}/capabilities", func(w http.ResponseWriter, r *http.Request, body []byte) {
		if _, ok := c.orgOf(w, r); !ok {
			return
		}
		c.bundles = append(c.bundles, body)
		c.contentTypes = append(c.contentTypes, r.Header.Get("Content-Type"))
		if r.Header.Get("Content-Type") != "application/gzip" {
			fail(w, 415, "unsupported_media_type", "the bundle must be application/gzip or application/x-tar")
			return
		}
		name, version, err := manifestOf(body)
		if err != nil {
			fail(w, 400, "invalid_capability", err.Error())
			return
		}
		sum := sha256.Sum256(body)
		digest := "sha256:" + hex.EncodeToString(sum[:])
		for _, v := range c.inventory {
			if v.Name == name && v.Version == version {
				if v.Digest == digest {
					reply(w, 200, v)
				} else {
					fail(w, 409, "capability_version_exists", fmt.Sprintf("%s@%s is already in the inventory with other contents", name, version))
				}
				return
			}
		}
		created := now()
		v := client.CapabilityVersion{ID: c.id(), Source: client.SourceInventory, Name: name, Version: version, Digest: digest,
			SizeBytes: int64(len(body)), Contents: client.CapabilityContents{Skills: []string{"review"}}, CreatedAt: &created}
		c.inventory = append(c.inventory, v)
		reply(w, 201, v)
	})
	handle("DELETE /api/v1/org/{org}/capabilities/{name}/{version}", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if _, ok := c.orgOf(w, r); !ok {
			return
		}
		name, version := r.PathValue("name"), r.PathValue("version")
		i := slices.IndexFunc(c.inventory, func(v client.CapabilityVersion) bool { return v.Name == name && v.Version == version })
		if i < 0 {
			fail(w, 404, "capability_not_found", fmt.Sprintf("%s@%s is not in the inventory", name, version))
			return
		}
		for _, b := range c.bindings {
			if b.Source == client.SourceInventory && b.Name == name && b.Version == version {
				fail(w, 409, "capability_in_use", fmt.Sprintf("%s@%s is pinned by a binding", name, version))
				return
			}
		}
		c.inventory = slices.Delete(c.inventory, i, i+1)
		w.WriteHeader(204)
	})

	handle("GET "+rt+"/capabilities", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		run, ok := c.runtimeOf(w, r)
		if !ok {
			return
		}
		out := []client.CapabilityBinding{}
		for _, b := range c.bindings {
			if b.RuntimeID == run.ID {
				out = append(out, *b)
			}
		}
		reply(w, 200, client.List[client.CapabilityBinding]{Items: out})
	})
	handle("POST "+rt+"/capabilities", func(w http.ResponseWriter, r *http.Request, body []byte) {
		run, ok := c.runtimeOf(w, r)
		if !ok {
			return
		}
		var req client.InstallCapabilityRequest
		if !strictJSON(w, body, &req) {
			return
		}
		v, ok := c.version(req.Source, req.Name, req.Version)
		if !ok {
			fail(w, 404, "capability_not_found", fmt.Sprintf("capability %q not found", req.Name))
			return
		}
		for _, b := range c.bindings {
			if b.RuntimeID == run.ID && b.Name == req.Name {
				fail(w, 409, "capability_already_installed", fmt.Sprintf("%s is already installed on the runtime", req.Name))
				return
			}
		}
		if req.Config != nil && !knownFlags(w, v, req.Config.Flags) {
			return
		}
		b := &client.CapabilityBinding{ID: c.id(), RuntimeID: run.ID, Source: v.Source, Name: v.Name, Version: v.Version,
			Enabled: req.Enabled == nil || *req.Enabled, CreatedAt: now(), UpdatedAt: now()}
		if req.Config != nil {
			b.Config = *req.Config
		}
		c.bindings = append(c.bindings, b)
		reply(w, 201, b)
	})
	handle("GET "+rt+"/capabilities/resolved", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		run, ok := c.runtimeOf(w, r)
		if !ok {
			return
		}
		res := c.resolved
		res.RuntimeID = run.ID
		reply(w, 200, res)
	})
	handle("PATCH "+rt+"/capabilities/{binding_id}", func(w http.ResponseWriter, r *http.Request, body []byte) {
		b, ok := c.bindingOf(w, r)
		if !ok {
			return
		}
		var req client.UpdateBindingRequest
		if !strictJSON(w, body, &req) {
			return
		}
		if req.Version != "" {
			b.Version = req.Version
		}
		if req.Enabled != nil {
			b.Enabled = *req.Enabled
		}
		if req.Config != nil {
			v, _ := c.version(b.Source, b.Name, b.Version)
			if !knownFlags(w, v, req.Config.Flags) {
				return
			}
			b.Config = *req.Config
		}
		reply(w, 200, b)
	})
	handle("DELETE "+rt+"/capabilities/{binding_id}", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		b, ok := c.bindingOf(w, r)
		if !ok {
			return
		}
		c.bindings = slices.DeleteFunc(c.bindings, func(x *client.CapabilityBinding) bool { return x == b })
		w.WriteHeader(204)
	})

	handle("PATCH "+rt, func(w http.ResponseWriter, r *http.Request, body []byte) {
		run, ok := c.runtimeOf(w, r)
		if !ok {
			return
		}
		var p client.RuntimePatch
		if !strictJSON(w, body, &p) {
			return
		}
		u := client.RuntimeUpdate{Live: []string{}, NextStart: []string{}}
		if p.CapabilitiesJSON != nil {
			var list []string
			if json.Unmarshal([]byte(*p.CapabilitiesJSON), &list) != nil {
				fail(w, 400, "invalid_capabilities_json", "capabilities_json must be a JSON array of strings")
				return
			}
			run.Config.CapabilitiesJSON = *p.CapabilitiesJSON
			u.NextStart = append(u.NextStart, "capabilities_json")
		}
		if p.Image != nil {
			run.Config.Image = *p.Image
			u.NextStart = append(u.NextStart, "image")
		}
		u.Runtime = *run
		reply(w, 200, u)
	})

	turn := func(kind string) func(w http.ResponseWriter, r *http.Request, body []byte) {
		return func(w http.ResponseWriter, r *http.Request, body []byte) {
			run, ok := c.runtimeOf(w, r)
			if !ok {
				return
			}
			var req client.PromptRequest
			if !strictJSON(w, body, &req) {
				return
			}
			if kind == client.SessionTask && req.SessionID != "" {
				fail(w, 400, "invalid_argument", "a task runs in a session of its own")
				return
			}
			if c.refuse != nil {
				fail(w, c.refuse.StatusCode, c.refuse.Code, c.refuse.Message)
				return
			}
			s := c.sessionFor(run.ID, kind, req)
			if s == nil {
				fail(w, 404, "session_not_found", fmt.Sprintf("session %s not found", req.SessionID))
				return
			}
			s.Turns++
			events := []client.SessionEvent{{Type: client.SessionEventMessage, Role: "user", Text: req.Prompt}}
			if c.turn != nil {
				events = append(events, c.turn(req)...)
			}
			res := client.PromptResult{Events: []client.SessionEvent{}}
			s.Status = client.SessionCompleted
			for _, ev := range events {
				ev.Seq, ev.Turn, ev.Time = int64(len(s.Events)+1), s.Turns, now()
				s.Events = append(s.Events, ev)
				res.Events = append(res.Events, ev)
				switch {
				case ev.Type == client.SessionEventMessage && ev.Role == "assistant":
					res.Result = ev.Text
				case ev.Type == client.SessionEventUsage:
					res.Usage = ev.Usage
				case ev.Type == client.SessionEventError:
					res.Error, s.Status = ev.Error.Message, client.SessionFailed
				case ev.Type == client.SessionEventDone && ev.Done.ExitCode != 0:
					s.Status = client.SessionFailed
				}
			}
			res.Session = s.Session
			if r.Header.Get("Accept") != "application/x-ndjson" {
				reply(w, 200, res)
				return
			}
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set(client.SessionIDHeader, s.ID)
			enc := json.NewEncoder(w)
			for _, ev := range res.Events {
				if c.cut && ev.Type == client.SessionEventDone {
					break
				}
				_ = enc.Encode(ev)
			}
		}
	}
	handle("POST "+rt+"/prompt", turn(client.SessionPrompt))
	handle("POST "+rt+"/task", turn(client.SessionTask))
	handle("GET "+rt+"/sessions", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		run, ok := c.runtimeOf(w, r)
		if !ok {
			return
		}
		var out []client.Session
		for _, s := range slices.Backward(c.sessions) {
			if s.RuntimeID == run.ID {
				out = append(out, s.Session)
			}
		}
		reply(w, 200, page(r, out))
	})
	handle("GET "+rt+"/sessions/{session_id}", func(w http.ResponseWriter, r *http.Request, _ []byte) {
		run, ok := c.runtimeOf(w, r)
		if !ok {
			return
		}
		for _, s := range c.sessions {
			if s.RuntimeID == run.ID && s.ID == r.PathValue("session_id") {
				reply(w, 200, s)
				return
			}
		}
		fail(w, 404, "session_not_found", fmt.Sprintf("session %s not found", r.PathValue("session_id")))
	})
}

// sessionFor is the session a turn runs in: the one named, or a new one.
func (c *capabilityAPI) sessionFor(runtimeID, kind string, req client.PromptRequest) *client.SessionTranscript {
	if req.SessionID != "" {
		for _, s := range c.sessions {
			if s.RuntimeID == runtimeID && s.ID == req.SessionID {
				return s
			}
		}
		return nil
	}
	s := &client.SessionTranscript{Session: client.Session{
		ID: c.id(), RuntimeID: runtimeID, Kind: kind, Harness: cmp.Or(req.Harness, "claude"),
		Status: client.SessionRunning, Title: req.Prompt, CreatedAt: now(), UpdatedAt: now().Add(time.Duration(len(c.sessions)) * time.Second),
	}}
	c.sessions = append(c.sessions, s)
	return s
}

// version finds a capability version: in the inventory, then the
// catalog, unless source says which; the newest when version is empty.
func (c *capabilityAPI) version(source, name, version string) (client.CapabilityVersion, bool) {
	var found []client.CapabilityVersion
	for _, list := range [][]client.CapabilityVersion{c.inventory, c.catalog} {
		for _, v := range list {
			if match(source, v.Source) && v.Name == name && match(version, v.Version) {
				found = append(found, v)
			}
		}
		if len(found) > 0 {
			return found[len(found)-1], true
		}
	}
	return client.CapabilityVersion{}, false
}

func (c *capabilityAPI) bindingOf(w http.ResponseWriter, r *http.Request) (*client.CapabilityBinding, bool) {
	run, ok := c.runtimeOf(w, r)
	if !ok {
		return nil, false
	}
	id := r.PathValue("binding_id")
	for _, b := range c.bindings {
		if b.RuntimeID == run.ID && b.ID == id {
			return b, true
		}
	}
	fail(w, 404, "binding_not_found", fmt.Sprintf("binding %s not found", id))
	return nil, false
}

func knownFlags(w http.ResponseWriter, v client.CapabilityVersion, flags map[string]bool) bool {
	for name := range flags {
		if !slices.ContainsFunc(v.Contents.Flags, func(f client.CapabilityFlag) bool { return f.Name == name }) {
			fail(w, 400, "unknown_flag", fmt.Sprintf("%s has no flag %q", v.Name, name))
			return false
		}
	}
	return true
}

// strictJSON decodes body into v as the server does, refusing unknown
// fields.
func strictJSON(w http.ResponseWriter, body []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		fail(w, 400, "malformed_json", err.Error())
		return false
	}
	return true
}

// manifestOf reads the name and version lines of a tar.gz bundle's
// capability.yaml.
func manifestOf(bundle []byte) (name, version string, err error) {
	entries, err := bundleEntries(bundle)
	if err != nil {
		return "", "", err
	}
	manifest, ok := entries["capability.yaml"]
	if !ok {
		return "", "", errors.New("capability.yaml: missing")
	}
	for _, line := range strings.Split(manifest.data, "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch strings.TrimSpace(k) {
		case "name":
			name = strings.TrimSpace(v)
		case "version":
			version = strings.TrimSpace(v)
		}
	}
	if name == "" || version == "" {
		return "", "", errors.New("capability.yaml: name and version are required")
	}
	return name, version, nil
}
