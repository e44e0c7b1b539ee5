package browser

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestSignInShowsRuntimes signs in with an API key and finds the
// workspace's runtimes in the runtimes table, each project's name a link
// to its page.
func TestSignInShowsRuntimes(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1", "p2")
	p := newTab(t, s.url)
	p.signIn(s.key)
	p.open(f.path("runtimes"))
	for name, id := range f.runtimes {
		p.waitFor("the row of "+name, `document.querySelector(`+jsString(runtimeRow(id))+`) !== null`)
		link := eval[string](p, `document.querySelector(`+jsString(runtimeRow(id)+" a")+`)?.getAttribute("href") ?? ""`)
		if !strings.HasSuffix(link, "/runtimes/"+id) && !strings.Contains(link, "/runtimes/"+id+"/") {
			t.Errorf("the row of %s links to %q, want its runtime's page", name, link)
		}
		if text := eval[string](p, `document.querySelector(`+jsString(runtimeRow(id))+`).textContent`); !strings.Contains(text, name) {
			t.Errorf("the row of %s says %q", name, text)
		}
	}
	for _, c := range p.cookies() {
		if !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict || c.Domain != "127.0.0.1" {
			t.Errorf("cookie %s: HttpOnly %v, SameSite %q, domain %q; want HttpOnly, Strict, host-only", c.Name, c.HTTPOnly, c.SameSite, c.Domain)
		}
	}
	// No key sits in the page's storage: the session is an HttpOnly cookie.
	stored := eval[string](p, `JSON.stringify({...localStorage}) + JSON.stringify({...sessionStorage}) + document.cookie`)
	if strings.Contains(stored, s.key) || strings.Contains(stored, "pdk_") {
		t.Errorf("the key is readable by the page's scripts: %s", stored)
	}
}

// TestSignOutEndsSession signs in, signs out, and finds that the cookie
// the session had no longer works.
func TestSignOutEndsSession(t *testing.T) {
	s := serve(t)
	s.newFleet(t, "acme", "p1")
	p := newTab(t, s.url)
	p.signIn(s.key)
	jar := p.cookieHeader()
	if jar == "" {
		t.Fatal("no cookie after sign-in")
	}
	if got := s.get(t, "/api/v1/console/session", http.Header{"Cookie": {jar}}); got != http.StatusOK {
		t.Fatalf("the session's cookie answers %d before sign-out, want 200", got)
	}
	p.click("Sign out", button("Sign out"))
	p.do("the sign-in form after sign-out", chromedp.WaitVisible(chromedp.ID("signin-key")))
	for _, path := range []string{"/api/v1/console/session", "/api/v1/me"} {
		if got := s.get(t, path, http.Header{"Cookie": {jar}}); got != http.StatusUnauthorized {
			t.Errorf("GET %s with the signed-out session's cookie answers %d, want 401", path, got)
		}
	}
	// A reload stays signed out.
	p.open("/")
	p.do("the sign-in form after a reload", chromedp.WaitVisible(chromedp.ID("signin-key")))
}
