package access_test

import (
	"context"
	"strings"
	"testing"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/store"
)

// needs are the columns of TestAuthorize's table, in order.
var needs = []iam.Need{iam.Viewer, iam.Member, iam.Admin, iam.Owner, iam.Installation}

// shorthand for the answers in TestAuthorize's table.
var answers = map[string]string{
	"-":      "",
	"404o":   "org_not_found",
	"404w":   "workspace_not_found",
	"404r":   "runtime_not_found",
	"low":    "role_too_low",
	"inst":   "installation_admin_only",
	"narrow": "key_narrowed_to_workspace",
}

// TestAuthorize: every principal (the installation admin, a session of
// each role, a member outside any workspace, another org's member, keys
// org-wide, narrowed to a workspace and read-only) asks each need at each
// target (an org, an org-wide route a narrowed key may use, a workspace
// seen and one not, a runtime in each, another org's runtime, and an
// installation action), and gets the one answer the rules give.
func TestAuthorize(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	targets := map[string]iam.Target{
		"org":       {Org: "acme"},
		"orgNarrow": {Org: "acme", Narrow: true},
		"dev":       {Org: "acme", Workspace: "dev"},
		"ops":       {Org: "acme", Workspace: "ops"},
		"nowhere":   {Org: "nope"},
		"other":     {Org: "other"},
		"rtDev":     iam.RuntimeTarget(w.rtDev),
		"rtOps":     iam.RuntimeTarget(w.rtOps),
		"rtOther":   iam.RuntimeTarget(w.rtW),
		"install":   {},
	}
	principals := map[string]iam.Principal{
		"installation":     w.installation,
		"owner":            w.principal(w.session("owner")),
		"admin":            w.principal(w.session("admin")),
		"member":           w.principal(w.session("member")),
		"viewer":           w.principal(w.session("viewer")),
		"loner":            w.principal(w.session("loner")),
		"outsider":         w.principal(w.session("outsider")),
		"member key":       w.principal(w.key("member", iam.KeySpec{})),
		"member key dev":   w.principal(w.key("member", iam.KeySpec{Workspace: "dev"})),
		"admin key viewer": w.principal(w.key("admin", iam.KeySpec{Role: "viewer"})),
		"admin key ops":    w.principal(w.key("admin", iam.KeySpec{Workspace: "ops"})),
	}
	table := authorizeTable()
	for who, rows := range table {
		for where, line := range rows {
			cells := strings.Fields(line)
			if len(cells) != len(needs) {
				t.Fatalf("%s at %s: %d cells", who, where, len(cells))
			}
			for i, cell := range cells {
				if cell == "." {
					continue
				}
				want, ok := answers[cell]
				if !ok {
					t.Fatalf("%s at %s: no answer %q", who, where, cell)
				}
				t.Run(who+"/"+where+"/"+string(needs[i]), func(t *testing.T) {
					_, err := w.svc.Authorize(ctx, principals[who], needs[i], targets[where])
					if got := code(err); got != want {
						t.Errorf("got %q, want %q", got, want)
					}
				})
			}
		}
	}
}

// TestAuthorizeScope: what Authorize resolves is the org with the role
// the principal has there, and the workspace.
func TestAuthorizeScope(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	sc, err := w.svc.Authorize(ctx, w.principal(w.session("viewer")), iam.Viewer, iam.Target{Org: "acme", Workspace: "dev"})
	must(t, err)
	if sc.Access.Org.ID != w.acme.ID || sc.Access.Role != auth.RoleViewer || sc.Workspace.ID != w.dev.ID {
		t.Fatalf("scope %+v", sc)
	}
	if !sc.Access.SeesWorkspace(w.dev.ID) || sc.Access.SeesWorkspace(w.ops.ID) {
		t.Fatalf("viewer of dev sees %v", sc.Access.Workspaces)
	}
	sc, err = w.svc.Authorize(ctx, w.principal(w.session("admin")), iam.Admin, iam.Target{Org: "acme"})
	must(t, err)
	if sc.Access.Workspaces != nil || sc.Workspace.ID != "" {
		t.Fatalf("an admin sees every workspace org-wide: %+v", sc)
	}
}

// TestAuthorizeRefusalReasons: a refused runtime says why, for the log
// of a door that answers every refusal alike (the SSH gateway).
func TestAuthorizeRefusalReasons(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		p    iam.Principal
		rt   iam.Target
		want string
	}{
		{"another org's key", w.principal(w.key("member", iam.KeySpec{})), iam.RuntimeTarget(w.rtW), "key_scoped_to_another_org"},
		{"not a member", w.principal(w.session("outsider")), iam.RuntimeTarget(w.rtDev), "not_a_member"},
		{"another workspace", w.principal(w.session("member")), iam.RuntimeTarget(w.rtOps), "workspace_not_visible"},
		{"a viewer", w.principal(w.session("viewer")), iam.RuntimeTarget(w.rtDev), "role_too_low"},
		{"no such runtime", w.principal(w.session("owner")), iam.RuntimeTarget(store.Runtime{}), "unknown_runtime"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.svc.Authorize(ctx, tc.p, iam.Member, tc.rt)
			if got := reason(err); got != tc.want {
				t.Fatalf("reason %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}

// authorizeTable is what each principal of TestAuthorize gets at each
// target: one cell per need.
func authorizeTable() map[string]map[string]string {
	// Columns: viewer member admin owner installation ("." not asked:
	// a runtime is reached with a role).
	return map[string]map[string]string{
		"installation": {
			"org": "- - - - -", "orgNarrow": "- - - - -", "dev": "- - - - -", "ops": "- - - - -", "nowhere": "404o 404o 404o 404o 404o",
			"other": "- - - - -", "rtDev": "- - - - .", "rtOps": "- - - - .", "rtOther": "- - - - .", "install": ". . . . -",
		},
		"owner": {
			"org": "- - - - inst", "dev": "- - - - inst", "ops": "- - - - inst", "nowhere": "404o 404o 404o 404o 404o",
			"other": "404o 404o 404o 404o 404o", "rtDev": "- - - - .", "rtOps": "- - - - .", "rtOther": "404r 404r 404r 404r .", "install": ". . . . inst",
		},
		"admin": {
			"org": "- - - low inst", "dev": "- - - low inst", "ops": "- - - low inst",
			"rtDev": "- - - low .", "rtOps": "- - - low .", "rtOther": "404r 404r 404r 404r .",
		},
		"member": {
			"org": "- - low low inst", "orgNarrow": "- - low low inst", "dev": "- - low low inst", "ops": "404w 404w 404w 404w 404w",
			"rtDev": "- - low low .", "rtOps": "404r 404r 404r 404r .",
		},
		"viewer": {
			"org": "- low low low inst", "dev": "- low low low inst", "ops": "404w 404w 404w 404w 404w",
			"rtDev": "- low low low .", "rtOps": "404r 404r 404r 404r .",
		},
		"loner": {
			"org": "- - low low inst", "dev": "404w 404w 404w 404w 404w", "rtDev": "404r 404r 404r 404r .",
		},
		"outsider": {
			"org": "404o 404o 404o 404o 404o", "dev": "404o 404o 404o 404o 404o", "rtDev": "404r 404r 404r 404r .",
			"other": "- - low low inst", "rtOther": "404r 404r 404r 404r .",
		},
		"member key": {
			"org": "- - low low inst", "dev": "- - low low inst", "ops": "404w 404w 404w 404w 404w", "other": "404o 404o 404o 404o 404o",
			"rtDev": "- - low low .", "rtOps": "404r 404r 404r 404r .", "rtOther": "404r 404r 404r 404r .",
		},
		"member key dev": {
			"org": "narrow narrow narrow narrow narrow", "orgNarrow": "- - low low inst", "dev": "- - low low inst",
			"ops": "404w 404w 404w 404w 404w", "rtDev": "- - low low .", "rtOps": "404r 404r 404r 404r .",
		},
		// A read-only key of an admin is a viewer's: it sees the
		// workspaces its holder is a member of, here none.
		"admin key viewer": {
			"org": "- low low low inst", "dev": "404w 404w 404w 404w 404w", "ops": "404w 404w 404w 404w 404w",
			"rtOps": "404r 404r 404r 404r .",
		},
		"admin key ops": {
			"org": "narrow narrow narrow narrow narrow", "orgNarrow": "- - - low inst", "ops": "- - - low inst",
			"dev": "404w 404w 404w 404w 404w", "rtOps": "- - - low .", "rtDev": "404r 404r 404r 404r .",
		},
	}
}
