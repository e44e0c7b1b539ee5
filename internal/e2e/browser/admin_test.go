package browser

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// submitOf is the submit button of the form holding the element with id.
func submitOf(id string) string {
	return `document.getElementById(` + jsString(id) + `).form.querySelector('button[type="submit"]')`
}

// exists is a JavaScript predicate: css selects something.
func exists(css string) string {
	return `document.querySelector(` + jsString(css) + `) !== null`
}

// everywhere is everything of the page a secret could leak into: its
// markup and the values of its fields.
const everywhere = `document.documentElement.outerHTML + "\n" + [...document.querySelectorAll("input, textarea, select")].map((e) => e.value).join("\n")`

// bearer is the header of a request with key.
func bearer(key string) http.Header {
	return http.Header{"Authorization": {"Bearer " + key}}
}

// TestOrgAdministration is an org admin's administration pages: an API
// key shown once, working, then revoked; an org secret never shown; an
// SSH key added and deleted; an invitation; a member's role changed.
func TestOrgAdministration(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme")
	admin := s.memberKey(t, f, "admin@acme.example", "admin")
	s.memberKey(t, f, "dev@acme.example", "member")
	p := newTab(t, s.url)
	p.signIn(admin)
	t.Run("keys", func(t *testing.T) { apiKeys(t, p.in(t), s, f) })
	t.Run("secrets", func(t *testing.T) { orgSecret(t, p.in(t), s, f) })
	t.Run("ssh-keys", func(t *testing.T) { sshKeys(t, p.in(t), s, f, admin) })
	t.Run("members", func(t *testing.T) { members(t, p.in(t), s, f) })
}

func apiKeys(t *testing.T, p *tab, s *server, f fleet) {
	p.open(f.path("keys"))
	p.settled("keys")
	p.fill("key-name", "ci")
	p.click("Create key", submitOf("key-name"))
	p.waitFor("the new key", `document.getElementById("new-key")?.value.startsWith("pdk_")`)
	key := eval[string](p, `document.getElementById("new-key").value`)
	if got := s.get(t, "/api/v1/me", bearer(key)); got != http.StatusOK {
		t.Fatalf("the new key answers %d on /api/v1/me, want 200", got)
	}
	p.click("Done, hide it", button("Done, hide it"))
	p.waitFor("the key hidden", `document.getElementById("new-key") === null`)
	if strings.Contains(eval[string](p, everywhere), key) {
		t.Error("the key is still in the page after Done, hide it")
	}
	if strings.Contains(eval[string](p, `JSON.stringify({...localStorage}) + JSON.stringify({...sessionStorage})`), key) {
		t.Error("the key is in the page's storage")
	}
	p.click("Revoke ci", button("Revoke ci"))
	p.waitFor("ci revoked", `[...document.querySelectorAll('tr[data-revoked="true"]')].some((r) => r.textContent.includes("ci"))`)
	if got := s.get(t, "/api/v1/me", bearer(key)); got != http.StatusUnauthorized {
		t.Errorf("the revoked key answers %d, want 401", got)
	}
}

func orgSecret(t *testing.T, p *tab, s *server, f fleet) {
	const value = "s3cr3t-value-9f2c41d7"
	p.open(f.path("secrets"))
	p.settled("secrets")
	p.fill("secret-name-org", "DB_PASSWORD")
	p.fill("secret-value-org", value)
	p.fill("secret-name-org", "DB_PASSWORD") // still there: the form was not drawn again meanwhile
	p.click("Create secret", submitOf("secret-name-org"))
	p.waitFor("DB_PASSWORD listed", exists(`tr[data-secret="DB_PASSWORD"]`)+` && document.getElementById("secret-value-org").value === ""`)
	if strings.Contains(eval[string](p, everywhere), value) {
		t.Error("the secret's value is in the page")
	}
	if _, err := s.sdk.GetSecret(t.Context(), f.org, "", "DB_PASSWORD"); err != nil {
		t.Errorf("the API has no org secret DB_PASSWORD: %v", err)
	}
	p.open(f.path("secrets")) // and not after a reload
	p.waitFor("DB_PASSWORD listed again", exists(`tr[data-secret="DB_PASSWORD"]`))
	if strings.Contains(eval[string](p, everywhere), value) {
		t.Error("the secret's value is in the page after a reload")
	}
}

func sshKeys(t *testing.T, p *tab, s *server, f fleet, admin string) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	fp := ssh.FingerprintSHA256(sp)
	p.open(f.path("ssh-keys"))
	p.settled("ssh-keys")
	p.fill("ssh-name", "laptop")
	p.fill("ssh-public-key", strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))))
	p.fill("ssh-name", "laptop") // still there: the form was not drawn again meanwhile
	p.click("Add key", submitOf("ssh-name"))
	row := `[...document.querySelectorAll("tr[data-ssh-key]")].find((r) => r.textContent.includes(` + jsString(fp) + `) && r.textContent.includes("laptop"))`
	p.waitFor("laptop listed with its fingerprint", row)
	mine, err := pc.New(s.url, admin)
	if err != nil {
		t.Fatal(err)
	}
	p.click("Delete SSH key laptop", button("Delete SSH key laptop"))
	p.waitFor("laptop gone", `!`+row)
	l, err := mine.ListSSHKeys(t.Context(), pc.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 0 {
		t.Errorf("the API still lists SSH keys: %+v", l.Items)
	}
}

func members(t *testing.T, p *tab, s *server, f fleet) {
	p.open(f.path("members"))
	p.settled("members")
	p.fill("invite-member", "new@acme.example")
	p.pick("invite-role", "viewer")
	p.click("Invite", submitOf("invite-member"))
	p.waitFor("the invitation listed", `[...document.querySelectorAll("tr[data-invitation]")].some((r) => r.textContent.includes("new@acme.example") && r.textContent.includes("viewer"))`)
	inv, err := s.sdk.ListOrgInvitations(t.Context(), f.org, pc.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Items) != 1 || inv.Items[0].Role != "viewer" {
		t.Errorf("the API's invitations: %+v", inv.Items)
	}

	role := `document.querySelector('select[aria-label="Role of dev@acme.example"]')`
	p.waitFor("dev's role", role+`?.value === "member"`)
	eval[bool](p, `(() => { const s = `+role+`; s.value = "viewer"; s.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	p.click("Save the role of dev", button("Save the role of dev@acme.example"))
	p.waitFor("the role saved", button("Save the role of dev@acme.example")+` === null && `+role+`.value === "viewer"`)
	ms, err := s.sdk.ListOrgMembers(t.Context(), f.org, pc.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms.Items {
		if m.Member == "dev@acme.example" && m.Role != "viewer" {
			t.Errorf("the API has dev as %s after the change, want viewer", m.Role)
		}
	}
}

// TestInstallationAdministration is the installation admin's pages: an
// org created and credits granted to it, provisions listed live, the
// providers with their breakers, the warm pool.
func TestInstallationAdministration(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1")
	p := newTab(t, s.url)
	p.signIn(s.key)

	p.open(f.path("admin/orgs"))
	p.settled("orgs")
	p.fill("org-name", "initech")
	p.click("Create org", submitOf("org-name"))
	p.waitFor("initech listed", exists(`tr[data-org="initech"]`))
	p.click("Grant credits to initech", button("Grant credits to initech"))
	p.waitFor("initech's balance", `document.getElementById("grant-org")?.value === "initech" && `+exists(`dd[data-balance]`))
	before := balanceShown(p)
	p.fill("grant-amount", "25")
	p.click("Grant", submitOf("grant-amount"))
	p.waitFor("the balance after the grant", `Number(document.querySelector("dd[data-balance]").dataset.balance) === `+strconv.FormatFloat(before+25, 'f', -1, 64))
	acct, err := s.sdk.GetCredits(t.Context(), "initech")
	if err != nil {
		t.Fatal(err)
	}
	if got := balanceShown(p); got != acct.Balance || got != before+25 {
		t.Errorf("the page shows a balance of %v, the API %v (%v before the grant of 25)", got, acct.Balance, before)
	}

	p.open(f.path("admin/provisions"))
	p.settled("provisions")
	seen := eval[[]string](p, `[...document.querySelectorAll("tr[data-provision]")].map((r) => r.dataset.provision)`)
	s.startRuntime(t, f, "p1")
	p.waitFor("a new provision, without a reload", `[...document.querySelectorAll("tr[data-provision]")].some((r) => !`+jsString(jsonOf(seen))+`.includes(r.dataset.provision) && r.textContent.includes(`+jsString(f.runtimes["p1"][:8])+`))`)

	p.open(f.path("admin/providers"))
	p.settled("providers")
	p.waitFor("docker with its breaker", exists(`tr[data-provider="docker"][data-breaker]`))
	if b := eval[string](p, `document.querySelector('tr[data-provider="docker"]').dataset.breaker`); b != "closed" {
		t.Errorf("docker's breaker shows %q, want closed", b)
	}

	p.open(f.path("admin/warm-pool"))
	p.settled("warm pool")
	if h := eval[string](p, `document.querySelector("h1").textContent`); !strings.Contains(strings.ToLower(h), "warm") {
		t.Errorf("the warm pool page's heading is %q", h)
	}
}

// balanceShown is the balance the page shows in dd[data-balance].
func balanceShown(p *tab) float64 {
	p.t.Helper()
	// The balance is shown again whenever the org's credits reload (an
	// event may reload them): read it once it is there.
	const shown = `document.querySelector("dd[data-balance]")?.dataset.balance ?? ""`
	p.waitFor("the balance shown", shown+` !== ""`)
	var v string
	err := testenv.Poll(testenv.Patience, func() error {
		if v = eval[string](p, shown); v == "" {
			return errors.New("the balance is reloading")
		}
		return nil
	})
	f, perr := strconv.ParseFloat(v, 64)
	if err != nil || perr != nil {
		p.t.Fatalf("the balance shown %q: %v %v\n%s", v, err, perr, p.describe())
	}
	return f
}
