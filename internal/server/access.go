package server

import (
	"context"
	"fmt"
	"io"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// accessPart is the access component's instance: wallet sign-in, the
// one access service that decides for every door (the API, the preview
// gateway, the SSH gateway), and the orgs, workspaces and projects it
// decides over.
type accessPart struct {
	svc    *iam.Service
	signIn *auth.SignIn
	// sessions is the access service's wallet sign-in.
	sessions *iam.SignIn
	tenancy  *tenancy.Service
	// bootstrapKey is the configured first admin key ("": a random one).
	bootstrapKey string
}

// accessComponent loads the session key of the data directory (made on
// first start unless the configuration gives it) and makes wallet
// sign-in, the access service and tenancy. It comes right after the store, so a
// bad session key fails the start before anything else is made.
func (w *wiring) accessComponent() component.Registration {
	return component.Def[*accessPart]{
		Name:     accessName,
		Requires: []string{storeName},
		Init: func(_ context.Context, ic *component.InitContext) (*accessPart, error) {
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			cfg, err := component.SectionOf[*config.AccessConfig](ic)
			if err != nil {
				return nil, err
			}
			si, err := w.signIn(in, cfg)
			if err != nil {
				return nil, err
			}
			svc := iam.New(iam.Config{Store: in.st, Now: w.now, DirectAdd: cfg.Members.DirectAdd,
				InvitationTTL: cfg.Members.InvitationTTL, Logger: in.logger})
			return &accessPart{
				svc: svc, signIn: si, sessions: svc.UseSignIn(si), bootstrapKey: cfg.BootstrapKey,
				tenancy: tenancy.New(tenancy.Config{Store: in.st, Now: w.now}),
			}, nil
		},
		// Start creates the first admin key when the store has none, and
		// prints it once, now that every component is initialised.
		Start: func(ctx context.Context, a *accessPart) error {
			return firstKey(ctx, a.svc, a.bootstrapKey, w.out)
		},
	}.Registration()
}

// firstKey creates the first admin key through the access service when
// the store has none and prints it once. A configured bootstrap key is
// used as that key.
func firstKey(ctx context.Context, svc *iam.Service, configured string, out io.Writer) error {
	plain, made, err := svc.FirstKey(ctx, configured)
	if err != nil {
		return fmt.Errorf("create the admin key: %w", err)
	}
	switch {
	case !made:
	case configured != "":
		fmt.Fprintln(out, "paddock: created the admin API key from the configured bootstrap key")
	default:
		fmt.Fprintf(out, "paddock: admin API key (shown once, store it now): %s\n", plain)
	}
	return nil
}

// signIn is wallet sign-in, with the session key of the data directory.
func (w *wiring) signIn(in *installation, cfg *config.AccessConfig) (*auth.SignIn, error) {
	key, err := auth.LoadSessionKey(in.dataDir, cfg.SessionKey)
	if err != nil {
		return nil, err
	}
	si := &auth.SignIn{
		Store: in.st, Key: key, Now: w.now, Domain: signInDomain(cfg.SignInDomain, w.doors.api.Addr()),
		ChallengeTTL: cfg.ChallengeTTL, SessionTTL: cfg.SessionTTL,
	}
	if err := si.Validate(); err != nil {
		return nil, err
	}
	return si, nil
}
