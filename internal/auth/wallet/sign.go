package wallet

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// ParsePrivateKey reads a secp256k1 private key written as 64 hex
// characters, with or without 0x. Zero and keys past the curve order are
// refused.
func ParsePrivateKey(s string) (*secp256k1.PrivateKey, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "0x"), "0X")
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return nil, fmt.Errorf("a private key is 64 hex characters")
	}
	var k secp256k1.ModNScalar
	if overflow := k.SetByteSlice(b); overflow || k.IsZero() {
		return nil, fmt.Errorf("the private key is not in the range of the curve's order")
	}
	return secp256k1.NewPrivateKey(&k), nil
}

// Sign signs msg as personal_sign does (EIP-191 version 0x45):
// deterministic (RFC 6979) and low-s, as r‖s‖v with v 27 or 28. Wallets
// give the same bytes for the same key and message.
func Sign(key *secp256k1.PrivateKey, msg []byte) [65]byte {
	h := PersonalHash(msg)
	compact := ecdsa.SignCompact(key, h[:], false) // 27+recid ‖ r ‖ s
	var sig [65]byte
	copy(sig[:64], compact[1:])
	sig[64] = compact[0]
	return sig
}
