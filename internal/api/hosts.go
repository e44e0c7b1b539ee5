package api

import (
	"net/http"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/host"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Hosts are the machines an org brings, each an ssh provider of that org
// only.
func Hosts(s *host.Service) Feature {
	return Feature{Name: "hosts", use: func(a *API) { a.hosts = s }, routes: func(a *API) []Route {
		return []Route{
			route("GET", "/api/v1/org/{org}/hosts", viewer, a.listHosts),
			route("POST", "/api/v1/org/{org}/hosts", member, a.addHost),
			route("GET", "/api/v1/org/{org}/hosts/{host}", viewer, a.getHost),
			route("DELETE", "/api/v1/org/{org}/hosts/{host}", member, a.removeHost),
		}
	}}
}

// hostOut renders a host, without its key.
func hostOut(h store.Host) client.Host {
	out := client.Host{
		ID: h.ID, OrgID: h.OrgID, Name: h.Name, Address: h.Address, User: h.User, HostKey: h.HostKey,
		DockerSocket: h.DockerSocket, RunDir: h.RunDir, DiskDir: h.DiskDir, Provider: h.ProviderName(),
		IdleTeardownSeconds: int64(h.IdleTeardown / time.Second), TeardownCommand: h.TeardownCommand,
		Mode: string(h.Mode.OrDefault()), State: string(h.State), LastUsedAt: h.LastUsedAt, CostPerHour: ledger.Credits(h.CostPerHourMicros),
		CreatedBy: h.CreatedBy, CreatedAt: h.CreatedAt,
	}
	if k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(h.HostKey)); err == nil {
		out.HostKeyFingerprint = ssh.FingerprintSHA256(k)
	}
	return out
}

func (a *API) addHost(w http.ResponseWriter, r *http.Request) error {
	org, err := a.org(r)
	if err != nil {
		return err
	}
	var req client.AddHostRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	var idle time.Duration
	if req.IdleTeardown != "" {
		if idle, err = time.ParseDuration(req.IdleTeardown); err != nil || idle <= 0 {
			return errdefs.InvalidArgument(host.CodeInvalid, "idle_teardown %q is a positive duration such as 30m", req.IdleTeardown)
		}
	}
	cost, err := ledger.MicrosOf(req.CostPerHour)
	if err != nil {
		return err
	}
	h, err := a.hosts.Add(r.Context(), org.ID, identity(r).Principal(), host.Spec{
		Name: req.Name, Address: req.Address, User: req.User, PrivateKey: []byte(req.PrivateKey), HostKey: req.HostKey,
		DockerSocket: req.DockerSocket, RunDir: req.RunDir, DiskDir: req.DiskDir,
		IdleTeardown: idle, TeardownCommand: req.TeardownCommand, CostPerHourMicros: cost, Mode: store.HostMode(req.Mode),
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, hostOut(h))
	return nil
}

func (a *API) listHosts(w http.ResponseWriter, r *http.Request) error {
	org, page, err := a.orgPage(r)
	if err != nil {
		return err
	}
	hs, next, err := a.hosts.List(r.Context(), org.ID, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(hs, next, hostOut))
	return nil
}

func (a *API) getHost(w http.ResponseWriter, r *http.Request) error {
	org, err := a.org(r)
	if err != nil {
		return err
	}
	h, err := a.hosts.Get(r.Context(), org.ID, r.PathValue("host"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, hostOut(h))
	return nil
}

// removeHost removes a machine of the org: the caller's own (one it
// added), or any for an admin; another's is not found to a member, as a
// key is.
func (a *API) removeHost(w http.ResponseWriter, r *http.Request) error {
	org, err := a.org(r)
	if err != nil {
		return err
	}
	h, err := a.hosts.Get(r.Context(), org.ID, r.PathValue("host"))
	if err != nil {
		return err
	}
	id := identity(r)
	if !access(r).Role.AtLeast(auth.RoleAdmin) && h.CreatedBy != id.Principal() {
		return errdefs.NotFound(host.CodeNotFound, "no host %q in this org", h.Name)
	}
	if err := a.hosts.Remove(r.Context(), h); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
