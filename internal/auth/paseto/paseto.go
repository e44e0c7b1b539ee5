// Package paseto implements PASETO v4.local tokens: XChaCha20 encryption
// with a BLAKE2b-MAC tag (encrypt-then-MAC), keyed by one 32-byte secret.
// Only v4.local exists here; there is no algorithm field to negotiate, so a
// token of any other version or purpose is simply refused.
//
// It follows https://github.com/paseto-standard/paseto-spec
// (docs/01-Protocol-Versions/Version4.md and Common.md) and is checked
// against that project's test vectors and against paseto-ts.
package paseto

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/chacha20"
)

// ErrInvalidToken is returned, wrapped with the detail, for every token
// Decrypt refuses. Callers should treat all refusals alike.
var ErrInvalidToken = errors.New("invalid paseto token")

const (
	header   = "v4.local."
	nonceLen = 32
	tagLen   = 32
)

// b64 is base64url without padding, rejecting set trailing bits as the
// spec requires (Common.md, "Base64 Decoding").
var b64 = base64.RawURLEncoding.Strict()

// Key is a v4.local symmetric key.
type Key [32]byte

// NewKey returns a random key.
func NewKey() Key {
	var k Key
	rand.Read(k[:]) // never fails: since Go 1.24 it crashes the program instead
	return k
}

// Encrypt returns a v4.local token carrying payload. footer travels in the
// clear but is authenticated; implicit is authenticated but not carried, so
// Decrypt must be given the same bytes. Either may be nil.
func Encrypt(k Key, payload, footer, implicit []byte) string {
	var n [nonceLen]byte
	rand.Read(n[:])
	return encrypt(k, n, payload, footer, implicit)
}

// encrypt is Encrypt with the nonce given, so tests can reproduce vectors.
func encrypt(k Key, n [nonceLen]byte, payload, footer, implicit []byte) string {
	ek, n2, ak := splitKey(k, n)
	c := make([]byte, len(payload))
	xchacha20(ek, n2, c, payload)
	t := mac(ak, pae([]byte(header), n[:], c, footer, implicit))

	body := make([]byte, 0, len(n)+len(c)+len(t))
	body = append(append(append(body, n[:]...), c...), t[:]...)
	token := header + b64.EncodeToString(body)
	if len(footer) > 0 {
		token += "." + b64.EncodeToString(footer)
	}
	return token
}

// Decrypt authenticates and decrypts a v4.local token made with k and the
// same implicit assertion, and returns its payload and footer. The footer
// is authenticated too, but it is the caller's to check; see
// DecryptWithFooter.
func Decrypt(k Key, token string, implicit []byte) (payload, footer []byte, err error) {
	rest, ok := strings.CutPrefix(token, header)
	if !ok {
		return nil, nil, fmt.Errorf("%w: not a v4.local token", ErrInvalidToken)
	}
	bodyB64, footerB64, hasFooter := strings.Cut(rest, ".")
	body, err := decodeSegment(bodyB64)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: body: %w", ErrInvalidToken, err)
	}
	if hasFooter {
		// An empty footer is written without its dot, so "body." is not a
		// token we would have made.
		if footerB64 == "" {
			return nil, nil, fmt.Errorf("%w: empty footer after dot", ErrInvalidToken)
		}
		if footer, err = decodeSegment(footerB64); err != nil {
			return nil, nil, fmt.Errorf("%w: footer: %w", ErrInvalidToken, err)
		}
	}
	if len(body) < nonceLen+tagLen {
		return nil, nil, fmt.Errorf("%w: %d-byte body is shorter than nonce and tag", ErrInvalidToken, len(body))
	}

	var n [nonceLen]byte
	copy(n[:], body[:nonceLen])
	c := body[nonceLen : len(body)-tagLen]
	t := body[len(body)-tagLen:]

	ek, n2, ak := splitKey(k, n)
	want := mac(ak, pae([]byte(header), n[:], c, footer, implicit))
	if subtle.ConstantTimeCompare(t, want[:]) != 1 {
		return nil, nil, fmt.Errorf("%w: authentication failed", ErrInvalidToken)
	}
	payload = make([]byte, len(c))
	xchacha20(ek, n2, payload, c)
	return payload, footer, nil
}

// DecryptWithFooter is Decrypt for a caller that expects a particular
// footer (a key id, say) and refuses any other, compared in constant time
// as the spec asks.
func DecryptWithFooter(k Key, token string, footer, implicit []byte) (payload []byte, err error) {
	payload, got, err := Decrypt(k, token, implicit)
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(got, footer) != 1 {
		return nil, fmt.Errorf("%w: footer is not the expected one", ErrInvalidToken)
	}
	return payload, nil
}

// decodeSegment decodes strict unpadded base64url. The decoder skips CR and
// LF, so the length check refuses them: one token, one spelling.
func decodeSegment(s string) ([]byte, error) {
	b, err := b64.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if b64.EncodedLen(len(b)) != len(s) {
		return nil, errors.New("not canonical base64url")
	}
	return b, nil
}

// splitKey derives the per-token encryption key and XChaCha20 nonce (ek,
// n2) and authentication key (ak) from k and the token's random nonce n.
func splitKey(k Key, n [nonceLen]byte) (ek, n2, ak []byte) {
	tmp := keyedHash(56, k[:], []byte("paseto-encryption-key"), n[:])
	ak = keyedHash(32, k[:], []byte("paseto-auth-key-for-aead"), n[:])
	return tmp[:32], tmp[32:], ak
}

func mac(ak, preAuth []byte) [tagLen]byte {
	var t [tagLen]byte
	copy(t[:], keyedHash(tagLen, ak, preAuth))
	return t
}

// keyedHash is BLAKE2b with an output size and key, libsodium's
// crypto_generichash.
func keyedHash(size int, key []byte, parts ...[]byte) []byte {
	h, err := blake2b.New(size, key)
	if err != nil {
		// Only sizes outside 1..64 or keys over 64 bytes fail; ours are
		// constants within range.
		panic(fmt.Sprintf("paseto: blake2b.New(%d, %d-byte key): %v", size, len(key), err))
	}
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// xchacha20 XORs src into dst with the XChaCha20 keystream (24-byte nonce).
func xchacha20(key, nonce, dst, src []byte) {
	c, err := chacha20.NewUnauthenticatedCipher(key, nonce)
	if err != nil {
		// Only a key of other than 32 bytes or a nonce of other than 12 or
		// 24 fails; splitKey's are 32 and 24.
		panic(fmt.Sprintf("paseto: xchacha20 with %d-byte key, %d-byte nonce: %v", len(key), len(nonce), err))
	}
	c.XORKeyStream(dst, src)
}

// pae is the spec's pre-authentication encoding: the piece count and then
// each piece prefixed with its length, all as little-endian 64-bit integers
// with the top bit cleared. Fixed-width lengths make the MAC input
// unambiguous, so no choice of pieces collides with another.
func pae(pieces ...[]byte) []byte {
	var buf bytes.Buffer
	le64 := func(n int) {
		buf.Write(binary.LittleEndian.AppendUint64(nil, uint64(n)&(1<<63-1)))
	}
	le64(len(pieces))
	for _, p := range pieces {
		le64(len(p))
		buf.Write(p)
	}
	return buf.Bytes()
}
