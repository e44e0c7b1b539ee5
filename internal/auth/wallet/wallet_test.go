package wallet

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// vectors is testdata/eip191.json, written by scripts/vectors/gen.mjs with
// ethers, an implementation that shares no code with this package.
type vectors struct {
	Valid []struct {
		Name        string `json:"name"`
		Address     string `json:"address"`
		Checksummed string `json:"checksummed"`
		Message     string `json:"message"`
		MessageHex  string `json:"message_hex"`
		Hash        string `json:"hash"`
		Signature   string `json:"signature"`
	} `json:"valid"`
	Invalid []struct {
		Name      string `json:"name"`
		Reason    string `json:"reason"`
		Address   string `json:"address"`
		Message   string `json:"message"`
		Signature string `json:"signature"`
		Recovers  string `json:"recovers"`
	} `json:"invalid"`
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	b, err := os.ReadFile("testdata/eip191.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("parse testdata/eip191.json: %v", err)
	}
	if len(v.Valid) == 0 || len(v.Invalid) == 0 {
		t.Fatal("testdata/eip191.json has no vectors")
	}
	return v
}

func TestEthersValid(t *testing.T) {
	for _, v := range loadVectors(t).Valid {
		t.Run(v.Name, func(t *testing.T) {
			msg := []byte(v.Message)
			if v.MessageHex != "" {
				var err error
				if msg, err = hex.DecodeString(strings.TrimPrefix(v.MessageHex, "0x")); err != nil {
					t.Fatal(err)
				}
			}

			addr, err := ParseAddress(v.Address)
			if err != nil {
				t.Fatalf("ParseAddress(%q): %v", v.Address, err)
			}
			if got := addr.String(); got != v.Checksummed {
				t.Errorf("String() = %s, want %s", got, v.Checksummed)
			}
			if got, want := addr.Lower(), strings.ToLower(v.Checksummed); got != want {
				t.Errorf("Lower() = %s, want %s", got, want)
			}

			hash := PersonalHash(msg)
			if got := "0x" + hex.EncodeToString(hash[:]); got != v.Hash {
				t.Errorf("PersonalHash = %s, want ethers' hashMessage %s", got, v.Hash)
			}

			sig, err := ParseSignature(v.Signature)
			if err != nil {
				t.Fatalf("ParseSignature: %v", err)
			}
			got, err := Recover(msg, sig)
			if err != nil {
				t.Fatalf("Recover: %v", err)
			}
			if got != addr {
				t.Errorf("Recover = %s, want %s", got, addr)
			}
			if err := Verify(msg, sig, addr); err != nil {
				t.Errorf("Verify: %v", err)
			}

			// The same signature with the bare recovery id (0/1).
			sig[64] -= 27
			if err := Verify(msg, sig, addr); err != nil {
				t.Errorf("Verify with v=%d: %v", sig[64], err)
			}
		})
	}
}

func TestEthersInvalid(t *testing.T) {
	for _, v := range loadVectors(t).Invalid {
		t.Run(v.Name, func(t *testing.T) {
			msg := []byte(v.Message)
			addr, err := ParseAddress(v.Address)
			if v.Reason == "malformed_address" {
				if !errors.Is(err, ErrInvalidAddress) {
					t.Fatalf("ParseAddress(%q) = %v, want ErrInvalidAddress", v.Address, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAddress(%q): %v", v.Address, err)
			}

			sig, err := ParseSignature(v.Signature)
			if v.Reason == "malformed_signature" {
				if !errors.Is(err, ErrInvalidSignature) {
					t.Fatalf("ParseSignature(%q) = %v, want ErrInvalidSignature", v.Signature, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSignature: %v", err)
			}

			err = Verify(msg, sig, addr)
			switch v.Reason {
			case "wrong_signer":
				if !errors.Is(err, ErrWrongSigner) {
					t.Fatalf("Verify = %v, want ErrWrongSigner", err)
				}
				want, err := ParseAddress(v.Recovers)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := Recover(msg, sig); err != nil || got != want {
					t.Errorf("Recover = %s, %v; ethers recovers %s", got, err, want)
				}
			case "invalid_signature":
				if !errors.Is(err, ErrInvalidSignature) || errors.Is(err, ErrWrongSigner) {
					t.Fatalf("Verify = %v, want ErrInvalidSignature", err)
				}
			default:
				t.Fatalf("unknown reason %q", v.Reason)
			}
		})
	}
}

// TestHighSTwin checks that the high-s vectors are what they claim to be:
// flipped back to (n-s, other v) they verify, so Recover refuses them for
// the EIP-2 rule alone.
func TestHighSTwin(t *testing.T) {
	var n int
	for _, v := range loadVectors(t).Invalid {
		if !strings.HasPrefix(v.Name, "high-s") {
			continue
		}
		n++
		sig, err := ParseSignature(v.Signature)
		if err != nil {
			t.Fatal(err)
		}
		var s secp256k1.ModNScalar
		s.SetByteSlice(sig[32:64])
		s.Negate()
		b := s.Bytes()
		copy(sig[32:64], b[:])
		sig[64] = 27 + 28 - sig[64]
		addr, err := ParseAddress(v.Address)
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify([]byte(v.Message), sig, addr); err != nil {
			t.Errorf("%s: low-s twin: %v", v.Name, err)
		}
	}
	if n == 0 {
		t.Fatal("no high-s vectors")
	}
}

func TestParseAddress(t *testing.T) {
	const checksummed = "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf"
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{checksummed, true},
		{strings.ToLower(checksummed), true},
		{"0x" + strings.ToUpper(checksummed[2:]), true},
		{"0x" + "00" + strings.Repeat("ab", 19), true}, // digits and lowercase only
		{"0x7e5F4552091A69125d5DfCb7b8C2659029395Bdf", false},
		{"0X" + checksummed[2:], false},
		{checksummed[2:], false},
		{checksummed + "00", false},
		{"", false},
	} {
		_, err := ParseAddress(tc.in)
		if tc.ok && err != nil {
			t.Errorf("ParseAddress(%q): %v", tc.in, err)
		}
		if !tc.ok && !errors.Is(err, ErrInvalidAddress) {
			t.Errorf("ParseAddress(%q) = %v, want ErrInvalidAddress", tc.in, err)
		}
	}
}

// TestSignRecover signs with decred's own signer, so AddressOf and Recover
// agree with a key whose address is known (private key 1).
func TestSignRecover(t *testing.T) {
	var one [32]byte
	one[31] = 1
	key := secp256k1.PrivKeyFromBytes(one[:])
	want, err := ParseAddress("0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf")
	if err != nil {
		t.Fatal(err)
	}
	if got := AddressOf(key.PubKey()); got != want {
		t.Fatalf("AddressOf = %s, want %s", got, want)
	}

	msg := []byte("paddock")
	hash := PersonalHash(msg)
	compact := ecdsa.SignCompact(key, hash[:], false) // code‖r‖s
	var sig [65]byte
	copy(sig[:64], compact[1:])
	sig[64] = compact[0]
	if err := Verify(msg, sig, want); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if err := Verify([]byte("paddock!"), sig, want); !errors.Is(err, ErrWrongSigner) {
		t.Fatalf("Verify over another message = %v, want ErrWrongSigner", err)
	}
}

// TestSignLikeEthers: our signature of each vector's message with its
// key is ethers' byte for byte (both are RFC 6979, low-s).
func TestSignLikeEthers(t *testing.T) {
	var f struct {
		Valid []struct {
			Name       string `json:"name"`
			PrivateKey string `json:"private_key"`
			Message    string `json:"message"`
			MessageHex string `json:"message_hex"`
			Signature  string `json:"signature"`
		} `json:"valid"`
	}
	b, err := os.ReadFile("testdata/eip191.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for _, v := range f.Valid {
		t.Run(v.Name, func(t *testing.T) {
			key, err := ParsePrivateKey(v.PrivateKey)
			if err != nil {
				t.Fatal(err)
			}
			msg := []byte(v.Message)
			if v.MessageHex != "" {
				if msg, err = hex.DecodeString(strings.TrimPrefix(v.MessageHex, "0x")); err != nil {
					t.Fatal(err)
				}
			}
			sig := Sign(key, msg)
			if got := "0x" + hex.EncodeToString(sig[:]); got != v.Signature {
				t.Errorf("Sign = %s, want ethers' %s", got, v.Signature)
			}
		})
	}
	for _, bad := range []string{"", "0x00", "0x" + strings.Repeat("00", 32), "0x" + strings.Repeat("ff", 32), strings.Repeat("zz", 32)} {
		if _, err := ParsePrivateKey(bad); err == nil {
			t.Errorf("ParsePrivateKey(%q) = nil error", bad)
		}
	}
}
