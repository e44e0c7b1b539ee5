package api

import (
	"context"
	"net/http"
	"slices"
	"strconv"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/preview"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Ports and preview URLs: the proxy to a sandbox's ports is the preview
// gateway (internal/preview), served ahead of the API's routes
// (ServeHTTP); here are the API's routes about ports and the gateway's
// share of the API (previewDoor).

// Preview configures preview URLs (preview.Config).
type Preview = preview.Config

// ShortID is how a preview host names a runtime (iam.ShortID).
func ShortID(runtimeID string) string { return iam.ShortID(runtimeID) }

// IsPreview reports whether r goes to a sandbox's port (a preview host, a
// path URL, or the instance's port proxy) rather than to the API.
func (a *API) IsPreview(r *http.Request) bool {
	return a.previews.Is(r) || a.instance != nil && instancePortRE.MatchString(r.URL.Path)
}

// servePreview answers a request to a preview host or a path URL; ok is
// false when r is neither.
func (a *API) servePreview(w http.ResponseWriter, r *http.Request) bool {
	return a.previews.Serve(w, r)
}

// newPreviews is the preview gateway, on the API's access service, rate
// limits, error body and open streams.
func (a *API) newPreviews() *preview.Gateway {
	return preview.New(preview.Options{Config: a.preview, Path: a.path,
		Door: previewDoor{a}, MaxBody: a.limits.UploadBodyBytes, Logger: a.logger, Publish: a.runtimes.PublishIfListening})
}

// previewDoor is what the preview gateway shares with the API
// (preview.Door).
type previewDoor struct{ a *API }

func (d previewDoor) Authenticate(w http.ResponseWriter, r *http.Request) (auth.Identity, error) {
	return d.a.authenticate(w, r)
}

func (d previewDoor) Admit(w http.ResponseWriter, r *http.Request, authn func() (auth.Identity, error)) (auth.Identity, error) {
	return d.a.admit(w, r, authn)
}

func (d previewDoor) TakeAddress(w http.ResponseWriter, r *http.Request) error {
	return d.a.takeAddress(w, r)
}

func (d previewDoor) TakeToken(w http.ResponseWriter, tok string) error { return d.a.takeToken(w, tok) }

func (d previewDoor) Live(ctx context.Context, id auth.Identity, org string) (context.Context, func()) {
	return d.a.live.open(ctx, id, org)
}

func (d previewDoor) Fail(w http.ResponseWriter, r *http.Request, err error) {
	d.a.fail(r.Context(), w, err)
}

func (d previewDoor) Status(err error) (int, string) {
	s := statusOf(err)
	return s, genericCodes[s]
}

func (d previewDoor) RequestID(ctx context.Context) string { return requestIDFrom(ctx) }

// HoldStream counts an envd stream of the E2B surface as an exec stream
// (e2b.Door).
func (d previewDoor) HoldStream(ctx context.Context, runtimeID, principal string) (func(), error) {
	return d.a.execCaps.acquire(ctx, runtimeID, principal)
}

// portsOf lists rt's ports: those listening in its sandbox (when it has a
// running one) and those marked public.
func (a *API) portsOf(ctx context.Context, rt store.Runtime, prefix string) ([]client.Port, error) {
	byPort := map[int]*client.Port{}
	if rt.Status == store.RuntimeRunning {
		agent, err := a.path.Dial(ctx, rt)
		if err != nil {
			return nil, err
		}
		ls, err := agent.ListPorts(ctx)
		if err != nil {
			return nil, err
		}
		var listening []int
		for _, l := range ls {
			listening = append(listening, l.Port)
			if p, seen := byPort[l.Port]; seen {
				p.Address += ", " + l.Address
				continue
			}
			byPort[l.Port] = &client.Port{Port: l.Port, Listening: true, Address: l.Address, PID: l.PID, Command: l.Command}
		}
		// A port declared public once listening is public now; the list
		// answers even when that cannot be written yet (the next request
		// writes it).
		if published, err := a.runtimes.PublishListening(ctx, rt, listening); err == nil {
			rt = published
		} else {
			a.logger.WarnContext(ctx, "could not make a listening port declared public public", "runtime", rt.ID, "err", err)
		}
	}
	for _, p := range rt.Config.PublicPorts {
		if byPort[p] == nil {
			byPort[p] = &client.Port{Port: p}
		}
		byPort[p].Public = true
	}
	out := make([]client.Port, 0, len(byPort))
	for _, p := range byPort {
		p.URL = a.previews.URL(rt, p.Port)
		p.PathURL = prefix + "/ports/" + strconv.Itoa(p.Port) + "/"
		out = append(out, *p)
	}
	slices.SortFunc(out, func(x, y client.Port) int { return x.Port - y.Port })
	return out, nil
}

// portParam reads {port}.
func portParam(r *http.Request) (int, error) {
	p, err := strconv.Atoi(r.PathValue("port"))
	if err != nil || p < 1 || p > 65535 {
		return 0, errdefs.InvalidArgument("invalid_port", "%q is not a port (1 to 65535)", r.PathValue("port"))
	}
	return p, nil
}

// rtPathOf is the path URL prefix of rt (its runtime path).
func rtPathOf(r *http.Request, rt store.Runtime) string {
	return "/api/v1/org/" + r.PathValue("org") + "/ws/" + r.PathValue("workspace") + "/runtimes/" + rt.ID
}

func (a *API) listPorts(w http.ResponseWriter, r *http.Request) error {
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	ports, err := a.portsOf(r.Context(), rt, rtPathOf(r, rt))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, client.List[client.Port]{Items: ports})
	return nil
}

// setPort marks a port public or private.
func (a *API) setPort(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	port, err := portParam(r)
	if err != nil {
		return err
	}
	var req client.SetPortRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	if rt, err = a.runtimes.SetPortPublic(ctx, rt.ID, port, req.Public); err != nil {
		return err
	}
	out := client.Port{Port: port, Public: req.Public, URL: a.previews.URL(rt, port), PathURL: rtPathOf(r, rt) + "/ports/" + strconv.Itoa(port) + "/"}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// createPreviewToken signs a preview token for one port.
func (a *API) createPreviewToken(w http.ResponseWriter, r *http.Request) error {
	port, err := portParam(r)
	if err != nil {
		return err
	}
	var req client.PreviewTokenRequest
	if err := decodeJSON(w, r, &req, true); err != nil {
		return err
	}
	ttl, err := a.signin.PreviewTTL(req.TTL)
	if err != nil {
		return err
	}
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	tok, exp := a.signin.IssuePreviewToken(identity(r), rt, port, ttl)
	writeJSON(w, http.StatusCreated, client.PreviewToken{Token: tok, URL: a.previews.URL(rt, port) + "?token=" + tok, ExpiresAt: exp})
	return nil
}
