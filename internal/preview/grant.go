package preview

import (
	"net"
	"net/http"
	"slices"
	"strings"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/store"
)

// grant is how a request was let through to a port.
type grant struct {
	// cred is the credential it acts for (the caller's, or the maker of
	// its preview token), "" for a public port; id is its identity.
	cred string
	id   auth.Identity
	// token is the preview token that let it through, if one did.
	token string
	// tokenInQuery: ?token= held the preview token; cookieSet: a cookie
	// now carries it.
	tokenInQuery, cookieSet bool
}

// presentedTokens are where r may carry a preview token, in the order
// token tries them: the header, ?token= (index 1), and on a preview host
// its cookies ("" where there is none).
func presentedTokens(r *http.Request, prefix string) []string {
	out := []string{r.Header.Get(tokenHeader), r.URL.Query().Get("token")}
	if prefix == "" {
		// Cookies only on preview hosts: a path URL shares the API's
		// origin with every other runtime's.
		for _, c := range append(r.CookiesNamed(cookieName), r.CookiesNamed(cookiePartitioned)...) {
			out = append(out, c.Value)
		}
	}
	return out
}

// anonymous reports whether r presents no credential at all: no
// Authorization header and no preview token.
func anonymous(r *http.Request, prefix string) bool {
	return r.Header.Get("Authorization") == "" && !slices.ContainsFunc(presentedTokens(r, prefix), func(t string) bool { return t != "" })
}

// access decides whether r may reach port of rt: a public port, a preview
// token (header, ?token=, or, on a preview host, its cookie), or the
// credentials of a member who sees rt's workspace (iam.Path.Authorize).
// rt is zero for a runtime that does not exist, and every check then
// fails exactly as for one the caller may not see. The request spends a
// token of its preview token's own bucket (TakeToken), of the credential
// it acts for, or of the client address when it has none or its
// credential is refused (Admit); an anonymous request has paid the
// address already.
func (g *Gateway) access(w http.ResponseWriter, r *http.Request, rt store.Runtime, port int, prefix string, anon bool) (grant, error) {
	public := rt.ID != "" && (slices.Contains(rt.Config.PublicPorts, port) || g.publishIfListening(r, rt, port))
	switch {
	case anon && public:
		return grant{}, nil
	case anon:
		return grant{}, errNeedsCredentials(port)
	case public:
		return grant{}, g.door.TakeAddress(w, r)
	}
	gr, ok, tokenErr := g.token(w, r, rt, port, prefix)
	if ok {
		return gr, g.door.TakeToken(w, gr.token)
	}
	id, err := g.door.Admit(w, r, func() (auth.Identity, error) {
		switch {
		case r.Header.Get("Authorization") != "":
			return g.door.Authenticate(w, r)
		case tokenErr != nil:
			return auth.Identity{}, tokenErr
		}
		return auth.Identity{}, errNeedsCredentials(port)
	})
	if err != nil {
		return grant{}, err
	}
	if err := g.path.Authorize(r.Context(), id, iam.Member, rt); err != nil {
		return grant{}, err
	}
	return grant{cred: id.Credential(), id: id}, nil
}

// publishIfListening makes port public when rt declares it public once
// listening and something listens on it now (Options.Publish), and
// reports whether it did. A failure to ask leaves the port private.
func (g *Gateway) publishIfListening(r *http.Request, rt store.Runtime, port int) bool {
	if g.publish == nil {
		return false
	}
	_, public, err := g.publish(r.Context(), rt, port)
	if err != nil {
		g.logger.WarnContext(r.Context(), "could not tell whether a port declared public listens", "runtime", rt.ID, "port", port, "err", err)
		return false
	}
	return public
}

// token looks for a preview token of rt and port in r
// (iam.Service.PreviewToken: it lives no longer than its maker's access).
// ok says one let r through; otherwise err says why the last one
// presented did not.
func (g *Gateway) token(w http.ResponseWriter, r *http.Request, rt store.Runtime, port int, prefix string) (gr grant, ok bool, err error) {
	if !g.path.Access.PreviewTokens() {
		return grant{}, false, nil
	}
	for i, tok := range presentedTokens(r, prefix) {
		if tok == "" {
			continue
		}
		// No token names a runtime that does not exist (rt.ID "").
		maker, cred, terr := g.path.Access.PreviewToken(r.Context(), tok, rt, port)
		if terr != nil {
			err = terr
			continue
		}
		gr := grant{cred: cred, id: maker, token: tok, tokenInQuery: i == 1}
		if i == 1 && prefix == "" {
			// A first visit: the cookie keeps a tab or an iframe going.
			cs := g.cookies(r, tok)
			for _, c := range cs {
				http.SetCookie(w, c)
			}
			gr.cookieSet = len(cs) > 0
		}
		return gr, true, nil
	}
	return grant{}, false, err
}

// cookies are the cookies a ?token= visit to a preview host sets. A
// SameSite=Lax one serves tabs and same-site pages. An iframe in another
// site's page is a third-party context, where browsers send only
// partitioned cookies: for that navigation alone (Sec-Fetch-Dest: iframe,
// Sec-Fetch-Site: cross-site), and where a secure cookie can be kept
// (HTTPS, or a *.localhost host, which browsers treat as secure), a
// SameSite=None, Partitioned (CHIPS) cookie is set too. Both are Secure
// over HTTPS. On plain HTTP on a real domain a cross-site iframe gets no
// cookie; a deployment that wants them serves HTTPS.
func (g *Gateway) cookies(r *http.Request, tok string) []*http.Cookie {
	secure := r.TLS != nil || g.cfg.Scheme == "https"
	cs := []*http.Cookie{{Name: cookieName, Value: tok, Path: "/", HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	thirdParty := r.Header.Get("Sec-Fetch-Dest") == "iframe" && r.Header.Get("Sec-Fetch-Site") == "cross-site"
	if thirdParty && (secure || strings.HasSuffix(strings.ToLower(host), ".localhost")) {
		cs = append(cs, &http.Cookie{Name: cookiePartitioned, Value: tok, Path: "/", HttpOnly: true,
			Secure: true, SameSite: http.SameSiteNoneMode, Partitioned: true})
	}
	return cs
}

// redirectStrippingToken sends a browser's GET that carried ?token= (now
// in a cookie) to the same URL without it, so the token stays out of
// history and Referer headers.
func redirectStrippingToken(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	if r.Method != http.MethodGet || !strings.Contains(r.Header.Get("Accept"), "text/html") {
		return false
	}
	q.Del("token")
	u := *r.URL
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
	return true
}
