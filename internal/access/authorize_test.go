package access_test

import (
	"context"
	"strings"
	"testing"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// needs are the columns of TestAuthorize's table, in order.
var needs = []iam.Need{iam.Viewer, iam.Member, iam.Admin, iam.Owner, iam.Installation}

// shorthand for the answers in TestAuthorize's table; "bug" is the
// caller's mistake, a private error (a role asked outside an org, the
// installation need of a runtime, no role asked where one acts).
var answers = map[string]string{
	"-":      "",
	"404o":   "org_not_found",
	"404w":   "workspace_not_found",
	"404r":   "runtime_not_found",
	"low":    "role_too_low",
	"inst":   "installation_admin_only",
	"narrow": "key_narrowed_to_workspace",
	"bug":    "internal",
}

// TestAuthorize: every principal (the installation admin, a session of
// each role, a member outside any workspace, another org's member, keys
// org-wide, narrowed to a workspace and read-only, and SSH keys
// registered with a session and with keys) asks each need at each target
// (an org, an org-wide route a narrowed key may use, a workspace seen and
// one not, an org that does not exist and another org, a runtime in each
// workspace, another org's runtime, and an installation action), and gets
// the one answer the rules give. The table is total: a principal or
// target without its line fails.
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
	memberKey := w.principal(w.key("member", iam.KeySpec{}))
	memberKeyDev := w.principal(w.key("member", iam.KeySpec{Workspace: "dev"}))
	member := w.principal(w.session("member"))
	principals := map[string]iam.Principal{
		"installation":       w.installation,
		"owner":              w.principal(w.session("owner")),
		"admin":              w.principal(w.session("admin")),
		"member":             member,
		"viewer":             w.principal(w.session("viewer")),
		"loner":              w.principal(w.session("loner")),
		"outsider":           w.principal(w.session("outsider")),
		"member key":         memberKey,
		"member key dev":     memberKeyDev,
		"admin key viewer":   w.principal(w.key("admin", iam.KeySpec{Role: "viewer"})),
		"admin key ops":      w.principal(w.key("admin", iam.KeySpec{Workspace: "ops"})),
		"member ssh":         w.sshPrincipal(member),
		"member key ssh":     w.sshPrincipal(memberKey),
		"member key dev ssh": w.sshPrincipal(memberKeyDev),
	}
	table := authorizeTable()
	for who := range table {
		if _, ok := principals[who]; !ok {
			t.Errorf("the table has a line for %s, who is no principal", who)
		}
	}
	for who, p := range principals {
		for where, target := range targets {
			line, ok := table[who][where]
			if !ok {
				t.Errorf("the table has no line for %s at %s", who, where)
				continue
			}
			cells := strings.Fields(line)
			if len(cells) != len(needs) {
				t.Fatalf("%s at %s: %d cells", who, where, len(cells))
			}
			// Public and any actions act nowhere in particular.
			free := "bug"
			if where == "install" {
				free = "-"
			}
			for i, need := range append([]iam.Need{iam.Public, iam.Any}, needs...) {
				cell := free
				if i >= 2 {
					cell = cells[i-2]
				}
				want, ok := answers[cell]
				if !ok {
					t.Fatalf("%s at %s: no answer %q", who, where, cell)
				}
				t.Run(who+"/"+where+"/"+string(need), func(t *testing.T) {
					_, err := w.svc.Authorize(ctx, p, need, target)
					if got := kind(err); got != want {
						t.Errorf("got %q (%v), want %q", got, err, want)
					}
				})
			}
		}
	}
}

// sshPrincipal is the principal of an SSH key p registers.
func (w *world) sshPrincipal(p iam.Principal) iam.Principal {
	w.t.Helper()
	k := w.sshKey(p)
	sp, _, err := w.svc.SSHKey(context.Background(), k.Fingerprint, k.PublicKey)
	must(w.t, err)
	return sp
}

// kind is err's public code, or "internal" for a private error.
func kind(err error) string {
	if _, public := errdefs.Public(err); err != nil && !public {
		return "internal"
	}
	return code(err)
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
// target: one cell per need (viewer member admin owner installation),
// by the rules: an org or a workspace the principal may not see is not
// found, whatever the need; a key narrowed to a workspace is kept off
// org-wide targets not marked Narrow; then the installation need asks for
// the installation admin and a role need for the role. A runtime in a
// workspace the principal may not see is not found; a runtime is reached
// with a role, an installation action outside any org with the
// installation need.
func authorizeTable() map[string]map[string]string {
	const (
		orgNotFound  = "404o 404o 404o 404o 404o"
		wsNotFound   = "404w 404w 404w 404w 404w"
		rtNotFound   = "404r 404r 404r 404r bug"
		installation = "bug bug bug bug inst"
		narrowed     = "narrow narrow narrow narrow narrow"
	)
	member := map[string]string{
		"org": "- - low low inst", "orgNarrow": "- - low low inst", "dev": "- - low low inst", "ops": wsNotFound,
		"nowhere": orgNotFound, "other": orgNotFound,
		"rtDev": "- - low low bug", "rtOps": rtNotFound, "rtOther": rtNotFound, "install": installation,
	}
	memberKeyDev := map[string]string{
		"org": narrowed, "orgNarrow": "- - low low inst", "dev": "- - low low inst", "ops": wsNotFound,
		"nowhere": orgNotFound, "other": orgNotFound,
		"rtDev": "- - low low bug", "rtOps": rtNotFound, "rtOther": rtNotFound, "install": installation,
	}
	return map[string]map[string]string{
		"installation": {
			"org": "- - - - -", "orgNarrow": "- - - - -", "dev": "- - - - -", "ops": "- - - - -",
			"nowhere": orgNotFound, "other": "- - - - -",
			"rtDev": "- - - - bug", "rtOps": "- - - - bug", "rtOther": "- - - - bug", "install": "bug bug bug bug -",
		},
		"owner": {
			"org": "- - - - inst", "orgNarrow": "- - - - inst", "dev": "- - - - inst", "ops": "- - - - inst",
			"nowhere": orgNotFound, "other": orgNotFound,
			"rtDev": "- - - - bug", "rtOps": "- - - - bug", "rtOther": rtNotFound, "install": installation,
		},
		"admin": {
			"org": "- - - low inst", "orgNarrow": "- - - low inst", "dev": "- - - low inst", "ops": "- - - low inst",
			"nowhere": orgNotFound, "other": orgNotFound,
			"rtDev": "- - - low bug", "rtOps": "- - - low bug", "rtOther": rtNotFound, "install": installation,
		},
		"member": member,
		"viewer": {
			"org": "- low low low inst", "orgNarrow": "- low low low inst", "dev": "- low low low inst", "ops": wsNotFound,
			"nowhere": orgNotFound, "other": orgNotFound,
			"rtDev": "- low low low bug", "rtOps": rtNotFound, "rtOther": rtNotFound, "install": installation,
		},
		"loner": {
			"org": "- - low low inst", "orgNarrow": "- - low low inst", "dev": wsNotFound, "ops": wsNotFound,
			"nowhere": orgNotFound, "other": orgNotFound,
			"rtDev": rtNotFound, "rtOps": rtNotFound, "rtOther": rtNotFound, "install": installation,
		},
		// A member of other, in none of its workspaces.
		"outsider": {
			"org": orgNotFound, "orgNarrow": orgNotFound, "dev": orgNotFound, "ops": orgNotFound,
			"nowhere": orgNotFound, "other": "- - low low inst",
			"rtDev": rtNotFound, "rtOps": rtNotFound, "rtOther": rtNotFound, "install": installation,
		},
		// A member's key, org-wide, is its holder in the holder's org.
		"member key":     member,
		"member key dev": memberKeyDev,
		// A read-only key of an admin is a viewer's: it sees the
		// workspaces its holder is a member of, here none.
		"admin key viewer": {
			"org": "- low low low inst", "orgNarrow": "- low low low inst", "dev": wsNotFound, "ops": wsNotFound,
			"nowhere": orgNotFound, "other": orgNotFound,
			"rtDev": rtNotFound, "rtOps": rtNotFound, "rtOther": rtNotFound, "install": installation,
		},
		"admin key ops": {
			"org": narrowed, "orgNarrow": "- - - low inst", "dev": wsNotFound, "ops": "- - - low inst",
			"nowhere": orgNotFound, "other": orgNotFound,
			"rtDev": rtNotFound, "rtOps": "- - - low bug", "rtOther": rtNotFound, "install": installation,
		},
		// An SSH key registered with a session acts with its user's
		// memberships; one registered with a key keeps that key's scope.
		"member ssh":         member,
		"member key ssh":     member,
		"member key dev ssh": memberKeyDev,
	}
}
