package secrets

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/store"
)

// Rotation says what a key rotation did.
type Rotation struct {
	Secrets int    // how many were sealed again
	Hosts   int    // how many machines' keys were sealed again
	KeyID   string // the new key's id
	// KeyFile is where the new key is, or "" when it came from the
	// environment (PADDOCK_SECRETS_NEW_KEY).
	KeyFile string
}

// Rotate seals every secret again under a new key, in one transaction.
//
// With a key file (envKey ""), the new key is made and written to
// secrets.key.next first, every secret is sealed again, and then the file
// is renamed over secrets.key. A rotation cut short is finished by running
// it again (it reuses secrets.key.next); servers reading the files pick
// the new key up on their own. With the key in the environment, newEnvKey
// is the new key, and servers must be restarted with it as
// PADDOCK_SECRETS_KEY.
func Rotate(ctx context.Context, st store.Transactor, dataDir, envKey, newEnvKey string) (Rotation, error) {
	var keys *Keyring
	var next string
	var err error
	if envKey != "" {
		if newEnvKey == "" {
			return Rotation{}, errors.New("the secrets key comes from PADDOCK_SECRETS_KEY: give the new one in PADDOCK_SECRETS_NEW_KEY (make one with: head -c 32 /dev/urandom | base64)")
		}
		if keys, err = LoadKeyring("", envKey); err != nil {
			return Rotation{}, err
		}
		raw, err := ParseKey(newEnvKey)
		if err != nil {
			return Rotation{}, fmt.Errorf("PADDOCK_SECRETS_NEW_KEY: %w", err)
		}
		if next, err = keys.add(raw); err != nil {
			return Rotation{}, err
		}
	} else {
		if keys, err = LoadKeyring(dataDir, ""); err != nil {
			return Rotation{}, err
		}
		nextPath := filepath.Join(dataDir, NextKeyFile)
		if err := writeKeyFile(nextPath, NewKey()); err != nil && !errors.Is(err, fs.ErrExist) {
			return Rotation{}, err
		}
		if err := keys.reload(false); err != nil {
			return Rotation{}, err
		}
		next = keys.CurrentKeyID() // the next key, while its file exists
	}

	n, hosts := 0, 0
	err = st.InTx(ctx, func(q store.Queries) error {
		n = 0 // a transaction PostgreSQL aborted runs again, whole
		all, err := q.AllSecrets(ctx)
		if err != nil {
			return err
		}
		for _, sec := range all {
			value, err := keys.open(sec)
			if err != nil {
				return err
			}
			if sec.KeyID == next {
				continue
			}
			if err := keys.sealWith(next, &sec, value); err != nil {
				return err
			}
			if _, err := q.UpdateSecret(ctx, sec); err != nil {
				return err
			}
			n++
		}
		hosts, err = resealHosts(ctx, q, keys, next)
		return err
	})
	if err != nil {
		return Rotation{}, err
	}
	r := Rotation{Secrets: n, Hosts: hosts, KeyID: next}
	if envKey == "" {
		r.KeyFile = filepath.Join(dataDir, KeyFile)
		if err := os.Rename(filepath.Join(dataDir, NextKeyFile), r.KeyFile); err != nil {
			return Rotation{}, err
		}
	}
	return r, nil
}

// HostKeySecret is a machine's private key as the keyring seals and opens
// it: a secret bound to the host's row (its id and org).
func HostKeySecret(h store.Host) store.Secret {
	return store.Secret{ID: h.ID, OrgID: h.OrgID, Name: "host " + h.Name, KeyID: h.KeyID, Sealed: h.SealedKey}
}

// hostSealer is what resealHosts uses of the rotation's transaction.
type hostSealer interface {
	ListHostsAfter(ctx context.Context, afterID string, limit int) ([]store.Host, error)
	SetHostSeal(ctx context.Context, id, keyID string, sealed []byte) error
}

// resealHosts seals every registered machine's key again under next, in
// the rotation's transaction, and returns how many it sealed.
func resealHosts(ctx context.Context, q hostSealer, keys *Keyring, next string) (int, error) {
	n, after := 0, ""
	for {
		hs, err := q.ListHostsAfter(ctx, after, store.MaxLimit)
		if err != nil {
			return n, err
		}
		for _, h := range hs {
			sec := HostKeySecret(h)
			if sec.KeyID == next {
				continue
			}
			value, err := keys.open(sec)
			if err != nil {
				return n, err
			}
			if err := keys.sealWith(next, &sec, value); err != nil {
				return n, err
			}
			if err := q.SetHostSeal(ctx, h.ID, sec.KeyID, sec.Sealed); err != nil {
				return n, err
			}
			n++
		}
		if len(hs) < store.MaxLimit {
			return n, nil
		}
		after = hs[len(hs)-1].ID
	}
}
