// Package secrets keeps the values of org and workspace secrets sealed at
// rest, resolves the secrets a runtime names, and says what a sandbox's
// agent injects and what the egress proxy brokers.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// KeySize is the length of a secrets key: AES-256.
const KeySize = 32

// KeyFile and NextKeyFile are the key files in the data directory. A
// rotation writes the new key to NextKeyFile before it re-encrypts, and
// renames it over KeyFile after, so a rotation cut short loses nothing:
// both keys are loaded while both files exist.
const (
	KeyFile     = "secrets.key"
	NextKeyFile = "secrets.key.next"
)

// CodeKeyMissing is the error code of a secret sealed under a key this
// server does not have.
const CodeKeyMissing = "secrets_key_missing"

// Keyring seals and opens secret values with AES-256-GCM. Each sealed
// value names its key (KeyID), and its row is bound into the seal as
// associated data, so a sealed value moved to another secret does not
// open.
type Keyring struct {
	dir string // where the key files are; "" when the key came from the environment

	mu      sync.RWMutex
	current string                 // the key id new seals use
	keys    map[string]cipher.AEAD // by key id
}

// LoadKeyring returns the installation's keyring. envKey, when set, is the
// key (base64 of 32 bytes, from PADDOCK_SECRETS_KEY); otherwise the key is
// read from dataDir/secrets.key, which is created (mode 0600) on first use.
func LoadKeyring(dataDir, envKey string) (*Keyring, error) {
	k := &Keyring{keys: map[string]cipher.AEAD{}}
	if envKey != "" {
		raw, err := ParseKey(envKey)
		if err != nil {
			return nil, fmt.Errorf("PADDOCK_SECRETS_KEY: %w", err)
		}
		id, err := k.add(raw)
		if err != nil {
			return nil, err
		}
		k.current = id
		return k, nil
	}
	k.dir = dataDir
	if err := k.reload(true); err != nil {
		return nil, err
	}
	return k, nil
}

// ParseKey decodes a key written as base64 (standard or URL alphabet).
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != KeySize {
				return nil, fmt.Errorf("a secrets key is %d bytes, this one %d", KeySize, len(b))
			}
			return b, nil
		}
	}
	return nil, errors.New("a secrets key is base64 of 32 random bytes (head -c 32 /dev/urandom | base64)")
}

// NewKey returns a random key, base64-encoded.
func NewKey() string {
	b := make([]byte, KeySize)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return base64.StdEncoding.EncodeToString(b)
}

// KeyID names a key without revealing it.
func KeyID(raw []byte) string {
	sum := sha256.Sum256(append([]byte("paddock secrets key id\x00"), raw...))
	return hex.EncodeToString(sum[:8])
}

func (k *Keyring) add(raw []byte) (string, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return "", err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return "", err
	}
	id := KeyID(raw)
	k.keys[id] = aead
	return id, nil
}

// reload reads the key files; create makes the key file if there is none.
// The current key is the next one while a rotation is under way.
func (k *Keyring) reload(create bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	path := filepath.Join(k.dir, KeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := writeKeyFile(path, NewKey()); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return fmt.Errorf("secrets key: %w", err)
	}
	raw, err := ParseKey(string(b))
	if err != nil {
		return fmt.Errorf("secrets key %s: %w", path, err)
	}
	if k.current, err = k.add(raw); err != nil {
		return err
	}
	b, err = os.ReadFile(filepath.Join(k.dir, NextKeyFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("secrets key: %w", err)
	}
	if raw, err = ParseKey(string(b)); err != nil {
		return fmt.Errorf("secrets key %s: %w", NextKeyFile, err)
	}
	k.current, err = k.add(raw)
	return err
}

// writeKeyFile creates path (0600) holding key; an existing file is
// fs.ErrExist.
func writeKeyFile(path, key string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(key + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CurrentKeyID names the key new seals use.
func (k *Keyring) CurrentKeyID() string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.current
}

// Seal encrypts value for s (its id, org and workspace must be set) under
// the current key, setting s.KeyID and s.Sealed. With key files it reads
// them again first, so a seal made during or after a rotation by another
// process uses the new key; call it inside the transaction that writes the
// secret, which a rotation's transaction then orders against.
func (k *Keyring) Seal(s *store.Secret, value []byte) error {
	if k.dir != "" {
		if err := k.reload(false); err != nil {
			return err
		}
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.sealWith(k.current, s, value)
}

func (k *Keyring) sealWith(id string, s *store.Secret, value []byte) error {
	aead := k.keys[id]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(value)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	s.KeyID = id
	s.Sealed = aead.Seal(nonce, nonce, value, boundTo(*s))
	return nil
}

// Open decrypts s's value. A value sealed under a key the keyring does
// not hold is retried once after reading the key files again (another
// process may have rotated the key).
func (k *Keyring) Open(s store.Secret) ([]byte, error) {
	v, err := k.open(s)
	if e, ok := errdefs.Public(err); ok && e.Code == CodeKeyMissing && k.dir != "" {
		if err := k.reload(false); err != nil {
			return nil, err
		}
		v, err = k.open(s)
	}
	return v, err
}

func (k *Keyring) open(s store.Secret) ([]byte, error) {
	k.mu.RLock()
	aead, ok := k.keys[s.KeyID]
	k.mu.RUnlock()
	if !ok {
		return nil, errdefs.Unavailable(CodeKeyMissing,
			"secret %q is sealed under key %s, which this server does not have (was the secrets key rotated? restart with the new PADDOCK_SECRETS_KEY)", s.Name, s.KeyID)
	}
	n := aead.NonceSize()
	if len(s.Sealed) < n+aead.Overhead() {
		return nil, fmt.Errorf("secret %s: sealed value too short", s.ID)
	}
	v, err := aead.Open(nil, s.Sealed[:n], s.Sealed[n:], boundTo(s))
	if err != nil {
		return nil, fmt.Errorf("secret %s: the sealed value does not open under key %s (tampered with, or moved from another secret)", s.ID, s.KeyID)
	}
	return v, nil
}

// boundTo is the associated data of a secret's seal: the row it belongs to.
func boundTo(s store.Secret) []byte {
	return []byte("paddock secret v1\x00" + s.ID + "\x00" + s.OrgID + "\x00" + s.WorkspaceID)
}

// LoadKeyFile reads the 32-byte key in path (base64), creating it (mode
// 0600, random) when there is none. Other installation keys than the
// secrets key use it (the session token key).
func LoadKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := writeKeyFile(path, NewKey()); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	raw, err := ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return raw, nil
}
