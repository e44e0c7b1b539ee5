package browser

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/paddockhq/paddock/internal/auth/wallet"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// walletProvider is the EIP-1193 provider a wallet extension would put at
// window.ethereum, installed before the page's scripts run (by DevTools,
// which the page's CSP does not govern). It shares its one account and
// has each personal_sign answered by the test, through the binding
// paddockWalletSign: the private key stays in Go.
const walletProvider = `(() => {
	const waiting = new Map();
	let next = 0;
	window.__walletAnswer = (id, signature) => { waiting.get(id)(signature); waiting.delete(id); return true; };
	window.ethereum = {
		request: async ({method, params}) => {
			if (method === "eth_requestAccounts" || method === "eth_accounts") return [%s];
			if (method === "personal_sign") {
				const id = ++next;
				return new Promise((resolve) => {
					waiting.set(id, resolve);
					window.paddockWalletSign(JSON.stringify({id, message: params[0], address: params[1]}));
				});
			}
			throw {code: 4200, message: "unsupported method " + method};
		},
	};
})()`

// signRequest is what the page's wallet asks the test to sign.
type signRequest struct {
	ID      int    `json:"id"`
	Message string `json:"message"` // 0x and the hex of the UTF-8 text
	Address string `json:"address"`
}

// installWallet gives the tab a wallet holding a fresh key; it returns
// the wallet's address and the messages it signed, as text.
func (p *tab) installWallet() (string, func() []string) {
	p.t.Helper()
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		p.t.Fatal(err)
	}
	key, err := wallet.ParsePrivateKey(hex.EncodeToString(raw))
	if err != nil {
		p.t.Fatal(err)
	}
	address := wallet.AddressOf(key.PubKey()).String()
	var mu sync.Mutex
	var signed []string
	err = chromedp.Listen(p.ctx, func(ev any) {
		call, ok := ev.(*cdpruntime.EventBindingCalled)
		if !ok || call.Name != "paddockWalletSign" {
			return
		}
		go func() { // not from the listener: it would wait on itself
			var req signRequest
			if err := json.Unmarshal([]byte(call.Payload), &req); err != nil {
				return
			}
			msg, err := hex.DecodeString(strings.TrimPrefix(req.Message, "0x"))
			if err != nil || !strings.EqualFold(req.Address, address) {
				return // never answered: the sign-in waits and the test fails
			}
			mu.Lock()
			signed = append(signed, string(msg))
			mu.Unlock()
			sig := wallet.Sign(key, msg)
			js := fmt.Sprintf(`window.__walletAnswer(%d, %s)`, req.ID, jsString("0x"+hex.EncodeToString(sig[:])))
			_, _ = chromedp.Run(p.ctx, chromedp.Evaluate[bool](js))
		}()
	})
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := chromedp.Call(p.ctx, cdpruntime.AddBinding, cdpruntime.AddBindingParams{Name: "paddockWalletSign"}); err != nil {
		p.t.Fatal(err)
	}
	if _, err := chromedp.Call(p.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: fmt.Sprintf(walletProvider, jsString(address)),
	}); err != nil {
		p.t.Fatal(err)
	}
	return address, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), signed...)
	}
}

// TestWalletSignIn signs in with a browser wallet (EIP-1193): the
// wallet's user, a member of acme, lands on acme's runtimes, having
// signed the server's challenge once.
func TestWalletSignIn(t *testing.T) {
	s := serve(t)
	f := s.newFleet(t, "acme", "p1")
	p := newTab(t, s.url)
	address, signed := p.installWallet()
	ctx := t.Context()
	if _, err := s.sdk.AddOrgMember(ctx, f.org, pc.AddOrgMemberRequest{Member: address, Role: "member"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.sdk.AddMember(ctx, f.org, f.ws, pc.AddMemberRequest{Member: address}); err != nil {
		t.Fatal(err)
	}
	p.open("/")
	p.waitFor("the wallet offered", button("Sign in with a wallet")+` !== null`)
	p.click("Sign in with a wallet", button("Sign in with a wallet"))
	p.waitFor("acme's runtimes", `location.pathname.startsWith("/o/acme/w/") && location.pathname.endsWith("/runtimes") && `+exists(runtimeRow(f.runtimes["p1"])))
	msgs := signed()
	if len(msgs) != 1 || !strings.Contains(strings.ToLower(msgs[0]), strings.ToLower(address)) {
		t.Errorf("the wallet signed %q, want the one challenge naming %s", msgs, address)
	}
	// The session is the wallet's user's.
	me := eval[string](p, `fetch("/api/v1/me").then((r) => r.text())`)
	if !strings.Contains(strings.ToLower(me), strings.ToLower(address)) {
		t.Errorf("/api/v1/me of the session is %s, want the wallet %s", me, address)
	}
}
