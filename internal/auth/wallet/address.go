package wallet

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"golang.org/x/crypto/sha3"
)

// ErrInvalidAddress is returned for a string that is not an Ethereum
// address, including a mixed-case one whose EIP-55 checksum is wrong.
var ErrInvalidAddress = errors.New("invalid ethereum address")

// Address is an Ethereum account address: the last 20 bytes of the
// Keccak-256 of the account's uncompressed public key.
type Address [20]byte

// ParseAddress parses "0x" followed by 40 hex digits. All-lowercase and
// all-uppercase hex carry no checksum and are taken as they are; mixed case
// is an EIP-55 checksum and must match, since a typo in a checksummed
// address is exactly what the checksum exists to catch.
func ParseAddress(s string) (Address, error) {
	var a Address
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || len(h) != 2*len(a) {
		return Address{}, fmt.Errorf("%w: %q: want 0x and 40 hex digits", ErrInvalidAddress, s)
	}
	if _, err := hex.Decode(a[:], []byte(h)); err != nil {
		return Address{}, fmt.Errorf("%w: %q: %w", ErrInvalidAddress, s, err)
	}
	if h != strings.ToLower(h) && h != strings.ToUpper(h) && s != a.String() {
		return Address{}, fmt.Errorf("%w: %q: bad EIP-55 checksum", ErrInvalidAddress, s)
	}
	return a, nil
}

// String returns the EIP-55 checksummed form, the one wallets display.
func (a Address) String() string {
	lower := hex.EncodeToString(a[:])
	hash := keccak256([]byte(lower))
	out := []byte(lower)
	for i, c := range out {
		// A letter is upper-cased when the matching nibble of the hash of
		// the lowercase hex is 8 or more.
		nibble := hash[i/2] >> 4
		if i%2 == 1 {
			nibble = hash[i/2] & 0x0f
		}
		if c >= 'a' && nibble >= 8 {
			out[i] = c - 'a' + 'A'
		}
	}
	return "0x" + string(out)
}

// Lower returns the all-lowercase 0x form, which is what we store, so that
// one account has one spelling.
func (a Address) Lower() string {
	return "0x" + hex.EncodeToString(a[:])
}

// AddressOf returns the address of a public key.
func AddressOf(pub *secp256k1.PublicKey) Address {
	// Hash the 64-byte X‖Y, without the 0x04 uncompressed-point prefix.
	hash := keccak256(pub.SerializeUncompressed()[1:])
	var a Address
	copy(a[:], hash[len(hash)-len(a):])
	return a
}

// keccak256 is the original Keccak submission Ethereum uses, which pads
// differently from the standardised SHA3-256.
func keccak256(parts ...[]byte) [32]byte {
	h := sha3.NewLegacyKeccak256()
	for _, p := range parts {
		h.Write(p)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}
