package cli_test

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestInvitationCommands: an org admin invites with 'member add' (and its
// alias 'member invite'), lists and revokes with 'member invitations' and
// 'member revoke'; the invitee lists, accepts and declines with
// 'paddock invitation', against the real API.
func TestInvitationCommands(t *testing.T) {
	t.Parallel()
	srv, env := cliOnServer(t, servertest.Options{})
	clitest.MustRun(t, env, "org", "create", "lab")
	// The installation admin adds directly: an admin of acme, and bob and
	// cy, users of another org.
	clitest.JSON[client.OrgMember](t, env, "member", "add", "ann@example.com", "--role", "admin")
	for _, who := range []string{"bob@example.com", "cy@example.com"} {
		clitest.JSON[client.OrgMember](t, env, "member", "add", who, "--org", "lab")
	}
	annKey := clitest.JSON[client.CreatedKey](t, env, "key", "create", "--member", "ann@example.com")
	bobKey := clitest.JSON[client.CreatedKey](t, env, "key", "create", "--member", "bob@example.com", "--org", "lab")
	cyKey := clitest.JSON[client.CreatedKey](t, env, "key", "create", "--member", "cy@example.com", "--org", "lab")
	ann := clitest.Env(srv.URL, annKey.Key)
	ann["PADDOCK_ORG"] = "acme"
	bob, cy := clitest.Env(srv.URL, bobKey.Key), clitest.Env(srv.URL, cyKey.Key)

	// Invited, not added.
	d := detail(clitest.MustRun(t, ann, "member", "add", "bob@example.com", "--role", "viewer"))
	if d["INVITEE"] != "bob@example.com" || d["ROLE"] != "viewer" || d["STATE"] != "pending" || d["INVITER"] != "ann@example.com" || d["INVITATION"] == "" {
		t.Fatalf("member add as an org admin: %v", d)
	}
	toBob := d["INVITATION"]
	toCy := clitest.JSON[client.Invitation](t, ann, "member", "invite", "cy@example.com")
	toNobody := clitest.JSON[client.Invitation](t, ann, "member", "invite", "nobody@example.com")
	rows := table(clitest.MustRun(t, ann, "member", "invitations"))
	if strings.Join(rows[0], " ") != "ID ORG INVITEE ROLE INVITER STATE EXPIRES" || len(rows) != 4 {
		t.Fatalf("member invitations:\n%v", rows)
	}
	if rows := table(clitest.MustRun(t, ann, "member", "ls")); len(rows) != 2 {
		t.Fatalf("acme's members after inviting:\n%v", rows)
	}
	mustFail(t, env, cli.ExitError, []string{"(user_not_found)"}, "user", "get", "nobody@example.com")

	// Bob sees his and accepts it.
	rows = table(clitest.MustRun(t, bob, "invitation", "ls"))
	if len(rows) != 2 || rows[1][0] != toBob || rows[1][1] != "acme" {
		t.Fatalf("bob's invitations:\n%v", rows)
	}
	mustFail(t, cy, cli.ExitError, []string{"(invitation_not_found)"}, "invitation", "accept", toBob)
	d = detail(clitest.MustRun(t, bob, "invitation", "accept", toBob))
	if d["MEMBER"] != "bob@example.com" || d["ROLE"] != "viewer" {
		t.Fatalf("invitation accept: %v", d)
	}
	if m := clitest.JSON[client.List[client.OrgMember]](t, ann, "member", "ls"); len(m.Items) != 2 {
		t.Fatalf("acme's members after bob accepted: %+v", m.Items)
	}

	// Cy declines; ann revokes the one to nobody.
	if i := clitest.JSON[client.Invitation](t, cy, "invitation", "decline", toCy.ID); i.State != client.InvitationDeclined {
		t.Fatalf("invitation decline: %+v", i)
	}
	if out := clitest.MustRun(t, ann, "member", "revoke", toNobody.ID); out != "revoked invitation "+toNobody.ID+"\n" {
		t.Fatalf("member revoke: %q", out)
	}
	mustFail(t, ann, cli.ExitError, []string{"(invitation_decided)"}, "member", "revoke", toNobody.ID)
	if l := clitest.JSON[client.List[client.Invitation]](t, ann, "member", "invitations"); len(l.Items) != 0 {
		t.Fatalf("pending after all: %+v", l.Items)
	}
	if l := clitest.JSON[client.List[client.Invitation]](t, cy, "invitation", "ls"); len(l.Items) != 0 {
		t.Fatalf("cy's after declining: %+v", l.Items)
	}
	// Bob, a viewer of acme now, may not invite; his key of the other org
	// does not reach acme at all.
	bob["PADDOCK_ORG"] = "acme"
	mustFail(t, bob, cli.ExitError, []string{"(org_not_found)"}, "member", "invite", "dan@example.com")
	inAcme := clitest.JSON[client.CreatedKey](t, env, "key", "create", "--member", "bob@example.com")
	bobInAcme := clitest.Env(srv.URL, inAcme.Key)
	bobInAcme["PADDOCK_ORG"] = "acme"
	mustFail(t, bobInAcme, cli.ExitError, []string{"(role_too_low)"}, "member", "invite", "dan@example.com")
	mustFail(t, bobInAcme, cli.ExitError, []string{"(role_too_low)"}, "member", "invitations")
}
