package dialect

import (
	"errors"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// wantErr checks that err is of kind with the public code, or nil when
// code is "".
func wantErr(t *testing.T, err, kind error, code string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	pe, ok := errdefs.Public(err)
	if !ok || !errors.Is(err, kind) || pe.Code != code {
		t.Fatalf("error %v: want %v with code %q", err, kind, code)
	}
}

func TestIdentityChecks(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	inv := store.Invitation{ID: "i", OrgID: "o", Email: "A@B.example", Role: "member", InviterID: "u", CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	withInv := func(f func(*store.Invitation)) store.Invitation { i := inv; f(&i); return i }
	invalid := errdefs.ErrInvalidArgument
	for _, c := range []struct {
		name string
		err  error
		code string
	}{
		{"user ok", second(CheckUser(store.User{ID: "u", Name: "n"})), ""},
		{"user without id", second(CheckUser(store.User{Name: "n"})), "invalid_user"},
		{"user without address or name", second(CheckUser(store.User{ID: "u"})), "invalid_user"},
		{"challenge ok", CheckAuthChallenge(store.AuthChallenge{Nonce: "n", Wallet: "w", Message: "m", ExpiresAt: at}), ""},
		{"challenge without expiry", CheckAuthChallenge(store.AuthChallenge{Nonce: "n", Wallet: "w", Message: "m"}), "invalid_auth_challenge"},
		{"session ok", CheckAuthSession(store.AuthSession{ID: "s", UserID: "u", ExpiresAt: at}), ""},
		{"session without user", CheckAuthSession(store.AuthSession{ID: "s", ExpiresAt: at}), "invalid_auth_session"},
		{"key session without user", CheckAuthSession(store.AuthSession{ID: "s", KeyID: "k", ExpiresAt: at}), ""},
		{"key session without expiry", CheckAuthSession(store.AuthSession{ID: "s", KeyID: "k"}), "invalid_auth_session"},
		{"session without expiry", CheckAuthSession(store.AuthSession{ID: "s", UserID: "u"}), "invalid_auth_session"},
		{"api key ok", CheckAPIKey(store.APIKey{ID: "k", Hash: "h", Role: "admin"}), ""},
		{"api key without hash", CheckAPIKey(store.APIKey{ID: "k", Role: "admin"}), "invalid_api_key"},
		{"api key of a workspace without org", CheckAPIKey(store.APIKey{ID: "k", Hash: "h", Role: "admin", WorkspaceID: "w"}), "invalid_api_key"},
		{"api key filter ok", CheckAPIKeyFilter(store.APIKeyFilter{Installation: true}), ""},
		{"api key filter of both", CheckAPIKeyFilter(store.APIKeyFilter{Installation: true, OrgID: "o"}), "invalid_api_key_filter"},
		{"ssh key unscoped", CheckSSHKey(store.SSHKey{ID: "s", UserID: "u", Fingerprint: "f", PublicKey: "p"}), ""},
		{"ssh key scoped", CheckSSHKey(store.SSHKey{ID: "s", UserID: "u", Fingerprint: "f", PublicKey: "p", OrgID: "o", Role: "member", WorkspaceID: "w"}), ""},
		{"ssh key without fingerprint", CheckSSHKey(store.SSHKey{ID: "s", UserID: "u", PublicKey: "p"}), "invalid_ssh_key"},
		{"ssh key org without role", CheckSSHKey(store.SSHKey{ID: "s", UserID: "u", Fingerprint: "f", PublicKey: "p", OrgID: "o"}), "invalid_ssh_key"},
		{"ssh key workspace without org", CheckSSHKey(store.SSHKey{ID: "s", UserID: "u", Fingerprint: "f", PublicKey: "p", WorkspaceID: "w"}), "invalid_ssh_key"},
		{"invitation ok", second(CheckInvitation(inv)), ""},
		{"invitation without inviter", second(CheckInvitation(withInv(func(i *store.Invitation) { i.InviterID = "" }))), "invalid_invitation"},
		{"invitation to both addresses", second(CheckInvitation(withInv(func(i *store.Invitation) { i.Wallet = "0xab" }))), "invalid_invitation"},
		{"invitation to no address", second(CheckInvitation(withInv(func(i *store.Invitation) { i.Email = "" }))), "invalid_invitation"},
		{"invitation expiring when made", second(CheckInvitation(withInv(func(i *store.Invitation) { i.ExpiresAt = at }))), "invalid_invitation"},
		{"invitation accepted", CheckInvitationState(store.InvitationAccepted), ""},
		{"invitation back to pending", CheckInvitationState(store.InvitationPending), "invalid_invitation"},
	} {
		t.Run(c.name, func(t *testing.T) { wantErr(t, c.err, invalid, c.code) })
	}
}

func TestIdentityLowercases(t *testing.T) {
	u, err := CheckUser(store.User{ID: "u", Email: "Ann@Example.COM", Wallet: "0xABcd"})
	if err != nil || u.Email != "ann@example.com" || u.Wallet != "0xabcd" {
		t.Fatalf("CheckUser = %+v, %v; want the email and wallet lowercased", u, err)
	}
	at := time.Now()
	inv, err := CheckInvitation(store.Invitation{ID: "i", OrgID: "o", Wallet: "0xABcd", Role: "member", InviterID: "u", CreatedAt: at, ExpiresAt: at.Add(time.Minute)})
	if err != nil || inv.Wallet != "0xabcd" {
		t.Fatalf("CheckInvitation = %+v, %v; want the wallet lowercased", inv, err)
	}
}

func TestIdentityConflicts(t *testing.T) {
	cause := errors.New("unique constraint")
	for _, c := range []struct {
		err  error
		code string
	}{
		{EmailTaken(cause), "email_taken"},
		{WalletTaken(cause), "wallet_taken"},
		{MemberExists(cause), "member_exists"},
		{SSHKeyExists(cause), "ssh_key_exists"},
		{AlreadyInvited(cause), "already_invited"},
	} {
		wantErr(t, c.err, errdefs.ErrConflict, c.code)
		if !errors.Is(c.err, cause) {
			t.Errorf("%v: want its cause kept", c.err)
		}
	}
	wantErr(t, InvitationDecided(), errdefs.ErrConflict, "invitation_decided")
}

// second returns the error of a check that also returns a value.
func second[T any](_ T, err error) error { return err }
