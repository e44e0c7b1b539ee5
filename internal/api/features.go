package api

import (
	"fmt"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/sshgw"
	"github.com/paddockhq/paddock/internal/task"
	"github.com/paddockhq/paddock/internal/world"
)

// Feature is a part of the API that is there only when the component that
// provides it is configured: its routes, and the service their handlers
// use. The component offers it and the server mounts it (API.Mount); a
// feature that is not mounted has no routes, so a call to one answers 404
// route_not_found.
type Feature struct {
	// Name says which feature it is; an API mounts each once.
	Name   string
	use    func(a *API)
	routes func(a *API) []Route
}

// Mount adds features to the API, before it serves. Mounting a feature
// twice panics, as routing a pattern twice does.
func (a *API) Mount(fs ...Feature) {
	for _, f := range fs {
		if a.mounted[f.Name] {
			panic(fmt.Sprintf("api: feature %s mounted twice", f.Name))
		}
		a.mounted[f.Name] = true
		f.use(a)
		a.add(f.routes(a))
	}
}

// Metrics records every request in m and serves GET /metrics.
func Metrics(m *metrics.Metrics) Feature {
	return Feature{Name: "metrics", use: func(a *API) { a.metrics = m }, routes: func(a *API) []Route {
		return []Route{route("GET", "/metrics", public, a.serveMetrics)}
	}}
}

// SignIn is wallet sign-in, the session tokens it issues, the console's
// sessions (console.go), and the preview tokens sealed with the same key:
// s is the sign-in of the access service the API asks
// (iam.Service.UseSignIn), which accepts them.
func SignIn(s *iam.SignIn) Feature {
	return Feature{Name: "sign-in", use: func(a *API) { a.signin = s }, routes: func(a *API) []Route {
		return append([]Route{
			route("POST", "/api/auth/challenge", public, a.authChallenge),
			route("POST", "/api/auth/session", public, a.createSession),
			route("DELETE", "/api/auth/session", anyone, a.deleteSession),
			route("POST", rtPrefix+"/previews/{port}/token", member, a.createPreviewToken),
		}, a.consoleRoutes()...)
	}}
}

// SSH says where the SSH gateway listens and which host key it has
// (GET /api/v1/ssh), and what connecting to one runtime takes.
func SSH(info *sshgw.Info) Feature {
	return Feature{Name: "ssh", use: func(a *API) { a.ssh = info }, routes: func(a *API) []Route {
		return []Route{
			route("GET", "/api/v1/ssh", anyone, a.sshInfo),
			route("GET", rtPrefix+"/ssh", member, a.runtimeSSH),
		}
	}}
}

// Credits are an org's credits, its usage, and the workspace seats and
// member limits the ledger keeps.
func Credits(l *ledger.Ledger) Feature {
	return Feature{Name: "credits", use: func(a *API) { a.ledger = l; a.tenancy.OpenOrgsWith(l) }, routes: func(a *API) []Route {
		return []Route{
			route("GET", "/api/v1/org/{org}/credits", admin, a.getCredits),
			route("POST", "/api/v1/org/{org}/credits/grants", installation, a.grantCredits),
			route("POST", "/api/v1/org/{org}/credits/balance", installation, a.setCreditBalance),
			route("GET", "/api/v1/org/{org}/credits/journal", admin, a.listCreditJournal),
			route("GET", "/api/v1/org/{org}/credits/holds", admin, a.listCreditHolds),
			route("GET", "/api/v1/org/{org}/usage", admin, a.getUsage),
			route("GET", wsPrefix+"/members", viewer, a.listMembers),
			route("POST", wsPrefix+"/members", admin, a.addMember),
			route("DELETE", wsPrefix+"/members/{member}", admin, a.removeMember),
			route("GET", wsPrefix+"/member-limit", viewer, a.getMemberLimit),
			route("PUT", wsPrefix+"/member-limit", owner, a.setMemberLimit),
		}
	}}
}

// Capabilities are the catalog, an org's capability inventory and a
// runtime's bindings.
func Capabilities(b *binding.Service) Feature {
	return Feature{Name: "capabilities", use: func(a *API) { a.bindings = b }, routes: func(a *API) []Route {
		return []Route{
			route("GET", "/api/v1/catalog", anyone, a.listCatalog),
			route("GET", "/api/v1/org/{org}/capabilities", viewer, a.listInventory),
			route("POST", "/api/v1/org/{org}/capabilities", admin, a.pushCapability).bundle(),
			route("DELETE", "/api/v1/org/{org}/capabilities/{name}/{version}", admin, a.deleteCapabilityVersion),
			route("GET", rtPrefix+"/capabilities", viewer, a.listBindings),
			route("POST", rtPrefix+"/capabilities", admin, a.installCapability),
			route("GET", rtPrefix+"/capabilities/resolved", viewer, a.resolvedCapabilities),
			route("PATCH", rtPrefix+"/capabilities/{binding_id}", admin, a.updateBinding),
			route("DELETE", rtPrefix+"/capabilities/{binding_id}", admin, a.uninstallCapability),
		}
	}}
}

// Sessions are prompts and tasks run by a harness in a runtime, and
// their transcripts.
func Sessions(s *session.Service) Feature {
	return Feature{Name: "sessions", use: func(a *API) { a.sessions = s }, routes: func(a *API) []Route {
		return []Route{
			route("POST", rtPrefix+"/prompt", member, a.prompt),
			route("POST", rtPrefix+"/task", member, a.task),
			route("GET", rtPrefix+"/sessions", viewer, a.listSessions),
			route("GET", rtPrefix+"/sessions/{session_id}", viewer, a.getSession),
		}
	}}
}

// Worlds are sets of sandboxes of kind world started together on one
// private network.
func Worlds(s *world.Service) Feature {
	return Feature{Name: "worlds", use: func(a *API) { a.worlds = s }, routes: func(a *API) []Route {
		return []Route{
			route("POST", wsPrefix+"/worlds", member, a.createWorld),
			route("GET", wsPrefix+"/worlds", viewer, a.listWorlds),
			route("GET", wsPrefix+"/worlds/{world_id}", viewer, a.worldAction(a.getWorld)),
			route("DELETE", wsPrefix+"/worlds/{world_id}", member, a.worldAction(a.deleteWorld)),
			route("POST", wsPrefix+"/worlds/{world_id}/pause", member, a.worldAction(a.pauseWorld)),
			route("POST", wsPrefix+"/worlds/{world_id}/resume", member, a.worldAction(a.resumeWorld)),
			route("POST", wsPrefix+"/worlds/{world_id}/members/{member_name}/exec", member, a.execWorldMember),
		}
	}}
}

// Tasks are evaluation runs in sandboxes of kind task, and their batches.
func Tasks(s *task.Service) Feature {
	return Feature{Name: "tasks", use: func(a *API) { a.tasks = s }, routes: func(a *API) []Route {
		return []Route{
			route("POST", wsPrefix+"/tasks", member, a.createTasks),
			route("GET", wsPrefix+"/tasks", viewer, a.listTasks),
			route("GET", wsPrefix+"/tasks/{task_id}", viewer, a.getTask),
			route("DELETE", wsPrefix+"/tasks/{task_id}", member, a.cancelTask),
			route("GET", wsPrefix+"/task-batches/{batch_id}", viewer, a.getTaskBatch),
		}
	}}
}
