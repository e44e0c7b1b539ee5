package api

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Instance mode: an installation that is one sandbox service instance
// serves its one runtime's operations under /api/sandbox as well. Each
// instance route mirrors a runtime route: the same handler, role, body
// limit and rate limits, authorized in the runtime's org and workspace
// as the runtime route is, so a caller who may not use the runtime route
// gets what it would get there (another org's key: 404).

// Sandbox names the runtime an installation in instance mode serves: its
// org and workspace, by name, as a runtime route's path names them, and
// its id.
type Sandbox struct {
	Org, Workspace, Runtime string
}

// InstanceFeature is the name of instance mode's feature.
const InstanceFeature = "instance"

// instancePrefix is where the instance routes are.
const instancePrefix = "/api/sandbox"

// instanceOp is one instance route and the runtime route it mirrors.
type instanceOp struct {
	method, path, of string
}

// instanceOps are the instance routes, each with the runtime route it
// is. An op whose runtime route is not mounted (its feature is not
// configured) is not mounted either.
var instanceOps = []instanceOp{
	{"GET", "", rtPrefix},
	{"POST", "/exec", rtPrefix + "/exec"},
	{"POST", "/prompt", rtPrefix + "/prompt"},
	{"POST", "/task", rtPrefix + "/task"},
	{"POST", "/start", rtPrefix + "/start"},
	{"POST", "/stop", rtPrefix + "/pause"},
	{"POST", "/resume", rtPrefix + "/resume"},
	{"POST", "/snapshot", rtPrefix + "/snapshots"},
	{"GET", "/snapshots", rtPrefix + "/snapshots"},
	{"GET", "/ssh", rtPrefix + "/ssh"},
	{"GET", "/secrets", rtPrefix + "/secrets"},
	{"PUT", "/secrets/{secret}", rtPrefix + "/secrets/{secret}"},
	{"DELETE", "/secrets/{secret}", rtPrefix + "/secrets/{secret}"},
	{"GET", "/previews", rtPrefix + "/previews"},
	{"PATCH", "/previews/{port}", rtPrefix + "/previews/{port}"},
	{"POST", "/previews/{port}/token", rtPrefix + "/previews/{port}/token"},
}

// Instance mounts the instance routes for the runtime target gives; ok
// is false until the server has found (or made) it, and the routes
// answer 503 instance_not_ready until then. Mount it after the features
// whose runtime routes it mirrors. The port proxy is there too, at
// /api/sandbox/ports/{port}/…, as at the runtime's path URL.
func Instance(target func() (Sandbox, bool)) Feature {
	return Feature{Name: InstanceFeature, use: func(a *API) { a.instance = target }, routes: func(a *API) []Route {
		byKey := map[string]Route{}
		for _, rt := range a.routes {
			byKey[rt.Method+" "+rt.Pattern] = rt
		}
		var out []Route
		for _, op := range instanceOps {
			src, ok := byKey[op.method+" "+op.of]
			if !ok {
				continue
			}
			rt := src
			rt.Pattern, rt.scoped, rt.door = instancePrefix+op.path, src.Pattern, a.instanceDoor
			out = append(out, rt)
		}
		return out
	}}
}

// instanceDoor names the instance's org, workspace and runtime in the
// request, as a runtime route's path would, before the guard authorizes
// it there.
func (a *API) instanceDoor(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok := a.instance()
		if !ok {
			a.fail(r.Context(), w, errNotReady())
			return
		}
		r.SetPathValue("org", s.Org)
		r.SetPathValue("workspace", s.Workspace)
		r.SetPathValue("runtime_id", s.Runtime)
		next.ServeHTTP(w, r)
	})
}

func errNotReady() error {
	return errdefs.Unavailable("instance_not_ready", "the instance's runtime is not known yet; try again")
}

// instancePortRE is the instance's port proxy: /api/sandbox/ports/P and
// what follows.
var instancePortRE = regexp.MustCompile(`^/api/sandbox/ports/([0-9]{1,5})(/.*)?$`)

// serveInstancePort proxies a request under /api/sandbox/ports/{port}/
// to that port of the instance's runtime, as the preview gateway does a
// runtime's path URL (its access rules, wake and proxy); false when r is
// not one, or the API serves no instance.
func (a *API) serveInstancePort(w http.ResponseWriter, r *http.Request) bool {
	if a.instance == nil || !strings.HasPrefix(r.URL.Path, instancePrefix+"/ports/") {
		return false
	}
	m := instancePortRE.FindStringSubmatch(r.URL.Path)
	if m == nil {
		return false
	}
	s, ok := a.instance()
	if !ok {
		a.fail(r.Context(), w, errNotReady())
		return true
	}
	port, _ := strconv.Atoi(m[1])
	a.previews.ServeIn(w, r, s.Org, s.Workspace, s.Runtime, port, strings.TrimSuffix(r.URL.Path, m[2]))
	return true
}
