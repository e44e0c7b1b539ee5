// Package wallet verifies Ethereum personal-sign (EIP-191 version 0x45)
// signatures, the kind a browser wallet produces for "sign in with your
// Ethereum account". It recovers the signer's address from the signature
// and compares it with the claimed one; it never sees a private key.
package wallet

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

var (
	// ErrInvalidSignature is returned for a signature that is malformed or
	// that no honest signer produces: a bad recovery id, r or s out of
	// range, or a high s.
	ErrInvalidSignature = errors.New("invalid signature")

	// ErrWrongSigner is returned by Verify for a well-formed signature made
	// by an address other than the expected one, so callers can tell "signed
	// by another account" from garbage.
	ErrWrongSigner = errors.New("signed by another address")
)

// PersonalHash returns the digest a wallet signs for personal_sign:
// Keccak-256 of "\x19Ethereum Signed Message:\n", the decimal byte length
// of msg, and msg. The prefix keeps a signed message from ever being a
// valid transaction.
func PersonalHash(msg []byte) [32]byte {
	prefix := "\x19Ethereum Signed Message:\n" + strconv.Itoa(len(msg))
	return keccak256([]byte(prefix), msg)
}

// ParseSignature parses "0x" followed by 130 hex digits, r‖s‖v as wallets
// return it.
func ParseSignature(s string) ([65]byte, error) {
	var sig [65]byte
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || len(h) != 2*len(sig) {
		return sig, fmt.Errorf("%w: want 0x and 130 hex digits, got %d characters", ErrInvalidSignature, len(s))
	}
	if _, err := hex.Decode(sig[:], []byte(h)); err != nil {
		return [65]byte{}, fmt.Errorf("%w: %w", ErrInvalidSignature, err)
	}
	return sig, nil
}

// Recover returns the address whose key signed msg with personal_sign.
//
// v may be 27/28 (what wallets return) or 0/1 (the bare recovery id some
// libraries return). An s in the upper half of the curve order is refused
// as in EIP-2: (r, n-s) with v flipped is a second valid signature by the
// same key, and accepting both would let anyone mint a different-looking
// copy of a signature.
func Recover(msg []byte, sig [65]byte) (Address, error) {
	var recID byte
	switch v := sig[64]; v {
	case 27, 28:
		recID = v - 27
	case 0, 1:
		recID = v
	default:
		return Address{}, fmt.Errorf("%w: v is %d, want 27, 28, 0 or 1", ErrInvalidSignature, v)
	}

	var r, s secp256k1.ModNScalar
	if overflow := r.SetByteSlice(sig[:32]); overflow || r.IsZero() {
		return Address{}, fmt.Errorf("%w: r is not in [1, n-1]", ErrInvalidSignature)
	}
	if overflow := s.SetByteSlice(sig[32:64]); overflow || s.IsZero() {
		return Address{}, fmt.Errorf("%w: s is not in [1, n-1]", ErrInvalidSignature)
	}
	if s.IsOverHalfOrder() {
		return Address{}, fmt.Errorf("%w: s is in the upper half of the curve order (EIP-2)", ErrInvalidSignature)
	}

	// decred's compact form is the recovery code first, then r‖s; 27 + id
	// names an uncompressed key, which is what Ethereum hashes.
	var compact [65]byte
	compact[0] = 27 + recID
	copy(compact[1:], sig[:64])
	hash := PersonalHash(msg)
	pub, _, err := ecdsa.RecoverCompact(compact[:], hash[:])
	if err != nil {
		return Address{}, fmt.Errorf("%w: recover public key: %w", ErrInvalidSignature, err)
	}
	return AddressOf(pub), nil
}

// Verify reports whether sig is want's personal_sign signature over msg:
// nil if so, ErrWrongSigner if it is a valid signature by someone else, and
// ErrInvalidSignature if it is no valid signature at all.
func Verify(msg []byte, sig [65]byte, want Address) error {
	got, err := Recover(msg, sig)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%w: recovered %s, want %s", ErrWrongSigner, got, want)
	}
	return nil
}
