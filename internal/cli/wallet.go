package cli

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"runtime"
	"strings"

	"github.com/paddockhq/paddock/internal/auth/wallet"
	"github.com/paddockhq/paddock/pkg/client"
)

// maxWalletKeyFile bounds what is read of a wallet key file: a key is 64
// hex digits.
const maxWalletKeyFile = 4 << 10

// walletSignIn signs in at url with the wallet whose private key file
// holds: it asks for a challenge for the key's address, signs the message
// the server issued (EIP-191 personal_sign) and opens a session. The key
// never leaves this process.
func (a *app) walletSignIn(ctx context.Context, url, file string) (client.AuthSession, error) {
	h, err := readWalletKey(file)
	if err != nil {
		return client.AuthSession{}, err
	}
	priv, err := wallet.ParsePrivateKey(h)
	if err != nil {
		// Its error is not shown: it could quote the key.
		return client.AuthSession{}, fmt.Errorf("wallet key file %s does not hold a valid secp256k1 private key", file)
	}
	c, err := a.newClient(url, "")
	if err != nil {
		return client.AuthSession{}, err
	}
	addr := wallet.AddressOf(priv.PubKey())
	host := ""
	if u, err := neturl.Parse(c.BaseURL()); err == nil {
		host = u.Host
	}
	return c.SignIn(ctx, addr.String(), func(message string) (string, error) {
		if err := checkSignInMessage(message, host, addr); err != nil {
			return "", err
		}
		sig := wallet.Sign(priv, []byte(message))
		return "0x" + hex.EncodeToString(sig[:]), nil
	})
}

// checkSignInMessage refuses to sign a message that is not a sign-in to
// the server at host for addr: a server that relays another's challenge
// (to sign in there as this wallet) names the other server.
func checkSignInMessage(message, host string, addr wallet.Address) error {
	lines := strings.Split(message, "\n")
	want := host + " wants you to sign in to paddock with your Ethereum account:"
	if len(lines) < 4 || lines[0] != want || lines[1] != addr.String() || !strings.HasPrefix(lines[3], "Nonce: ") {
		first := ""
		if len(lines) > 0 {
			first = lines[0]
		}
		return fmt.Errorf("refusing to sign: the message is not a sign-in to %s for %s (it begins %q); if the server signs in under another name, use that URL", host, addr, first)
	}
	return nil
}

// readWalletKey reads a hex private key (0x optional, surrounding space
// ignored) from file and returns its 64 hex digits. Like ssh with its
// keys, it refuses a file that its group or others may read or write.
func readWalletKey(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("wallet key file: %w", err)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("wallet key file: %w", err)
	}
	// Windows has no such mode bits; its ACLs are not checked.
	if perm := st.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return "", fmt.Errorf("wallet key file %s is open to others (mode %04o): it must be readable by its owner only (chmod 600 %s)", file, perm, file)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxWalletKeyFile+1))
	if err != nil {
		return "", fmt.Errorf("wallet key file: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		s = h
	} else if h, ok := strings.CutPrefix(s, "0X"); ok {
		s = h
	}
	if _, err := hex.DecodeString(s); err != nil || len(s) != 64 {
		return "", fmt.Errorf("wallet key file %s does not hold a hex secp256k1 private key (64 hex digits, 0x optional)", file)
	}
	return s, nil
}
