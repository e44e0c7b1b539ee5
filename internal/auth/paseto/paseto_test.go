package paseto

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// vector is one test of testdata/paseto-ts.json, written by
// scripts/vectors/gen.mjs with paseto-ts, an independent implementation.
type vector struct {
	Name       string  `json:"name"`
	ExpectFail bool    `json:"expect-fail"`
	Key        string  `json:"key"`
	Nonce      string  `json:"nonce"`
	Token      string  `json:"token"`
	Payload    *string `json:"payload"`
	Footer     string  `json:"footer"`
	Implicit   string  `json:"implicit-assertion"`
}

func loadVectors(t *testing.T, path string) []vector {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Tests []vector }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	if len(f.Tests) == 0 {
		t.Fatalf("%s has no tests", path)
	}
	return f.Tests
}

// mustHex decodes s into dst, which it must fill exactly.
func mustHex(t *testing.T, dst []byte, s string) {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(dst) {
		t.Fatalf("hex %q: %d bytes, want %d: %v", s, len(b), len(dst), err)
	}
	copy(dst, b)
}

func mustKey(t *testing.T, s string) Key {
	t.Helper()
	var k Key
	mustHex(t, k[:], s)
	return k
}

// checkGood reproduces the token from its key and nonce and decrypts it
// back to its payload and footer.
func checkGood(t *testing.T, v vector) {
	t.Helper()
	if v.Payload == nil {
		t.Fatal("vector has no payload")
	}
	k := mustKey(t, v.Key)
	payload, footer, implicit := []byte(*v.Payload), []byte(v.Footer), []byte(v.Implicit)

	var n [nonceLen]byte
	mustHex(t, n[:], v.Nonce)
	if got := encrypt(k, n, payload, footer, implicit); got != v.Token {
		t.Errorf("encrypt:\n got %s\nwant %s", got, v.Token)
	}
	gotPayload, gotFooter, err := Decrypt(k, v.Token, implicit)
	if err != nil {
		t.Fatalf("Decrypt: %v", err)
	}
	if !bytes.Equal(gotPayload, payload) {
		t.Errorf("payload = %q, want %q", gotPayload, payload)
	}
	if !bytes.Equal(gotFooter, footer) {
		t.Errorf("footer = %q, want %q", gotFooter, footer)
	}
}

func TestPasetoTS(t *testing.T) {
	for _, v := range loadVectors(t, "testdata/paseto-ts.json") {
		t.Run(v.Name, func(t *testing.T) {
			checkGood(t, v)

			k := mustKey(t, v.Key)
			if _, err := DecryptWithFooter(k, v.Token, []byte(v.Footer), []byte(v.Implicit)); err != nil {
				t.Errorf("DecryptWithFooter with its footer: %v", err)
			}
			_, err := DecryptWithFooter(k, v.Token, []byte(v.Footer+"x"), []byte(v.Implicit))
			if !errors.Is(err, ErrInvalidToken) {
				t.Errorf("DecryptWithFooter with another footer = %v, want ErrInvalidToken", err)
			}
		})
	}
}

func TestTamper(t *testing.T) {
	k := mustKey(t, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	var n [nonceLen]byte
	payload, footer, implicit := []byte(`{"sub":"0xabc"}`), []byte(`{"kid":"k1"}`), []byte("paddock")
	token := encrypt(k, n, payload, footer, implicit)
	if _, _, err := Decrypt(k, token, implicit); err != nil {
		t.Fatalf("untampered token: %v", err)
	}
	bodyB64, footerB64, _ := strings.Cut(strings.TrimPrefix(token, header), ".")

	refuse := func(t *testing.T, what string, k Key, token string, implicit []byte) {
		t.Helper()
		if _, _, err := Decrypt(k, token, implicit); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: Decrypt = %v, want ErrInvalidToken", what, err)
		}
	}

	t.Run("characters", func(t *testing.T) {
		for i := range len(token) {
			c := byte('A')
			if token[i] == c {
				c = 'B'
			}
			refuse(t, fmt.Sprintf("character %d", i), k, token[:i]+string(c)+token[i+1:], implicit)
		}
	})
	t.Run("body bytes", func(t *testing.T) {
		body, _ := b64.DecodeString(bodyB64)
		for i := range body {
			b := bytes.Clone(body)
			b[i] ^= 0x01
			refuse(t, "body byte", k, header+b64.EncodeToString(b)+"."+footerB64, implicit)
		}
	})
	t.Run("footer bytes", func(t *testing.T) {
		for i := range footer {
			f := bytes.Clone(footer)
			f[i] ^= 0x01
			refuse(t, "footer byte", k, header+bodyB64+"."+b64.EncodeToString(f), implicit)
		}
	})
	t.Run("structure", func(t *testing.T) {
		for _, tc := range []struct{ what, token string }{
			{"v4.public header", "v4.public." + bodyB64 + "." + footerB64},
			{"v3.local header", "v3.local." + bodyB64 + "." + footerB64},
			{"upper-case header", "V4.LOCAL." + bodyB64 + "." + footerB64},
			{"no header", bodyB64 + "." + footerB64},
			{"footer dropped", header + bodyB64},
			{"extra segment", token + ".AA"},
			{"padding", header + bodyB64 + "==." + footerB64},
			{"standard base64 alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(token)},
			{"newline in body", header + bodyB64[:10] + "\n" + bodyB64[10:] + "." + footerB64},
			{"bad base64", header + "!!!!" + "." + footerB64},
			{"empty body", header},
			{"short body", header + b64.EncodeToString(make([]byte, nonceLen+tagLen-1))},
			{"empty", ""},
		} {
			if tc.token == token {
				continue // the replacer found nothing to replace
			}
			refuse(t, tc.what, k, tc.token, implicit)
		}
	})
	t.Run("trailing bits", func(t *testing.T) {
		// A final character that differs only in bits past the last byte
		// decodes to the same bytes; only strict decoding refuses it.
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		if len(bodyB64)%4 == 0 {
			t.Fatalf("body of %d characters has no trailing bits", len(bodyB64))
		}
		last := strings.IndexByte(alphabet, bodyB64[len(bodyB64)-1])
		loose := bodyB64[:len(bodyB64)-1] + string(alphabet[last|1])
		refuse(t, "trailing bits set", k, header+loose+"."+footerB64, implicit)
	})
	t.Run("footer added", func(t *testing.T) {
		plain := encrypt(k, n, payload, nil, implicit)
		refuse(t, "footer added", k, plain+"."+footerB64, implicit)
		refuse(t, "dot without footer", k, plain+".", implicit)
	})
	t.Run("wrong key", func(t *testing.T) {
		other := k
		other[0] ^= 1
		refuse(t, "wrong key", other, token, implicit)
	})
	t.Run("wrong implicit assertion", func(t *testing.T) {
		refuse(t, "other implicit", k, token, []byte("paddocK"))
		refuse(t, "no implicit", k, token, nil)
	})
}

func TestRoundTrip(t *testing.T) {
	k := NewKey()
	if k == (Key{}) || k == NewKey() {
		t.Fatal("NewKey is not random")
	}
	payload := []byte(`{"sid":"abc"}`)
	a := Encrypt(k, payload, nil, nil)
	if a == Encrypt(k, payload, nil, nil) {
		t.Fatal("two encryptions of one payload are equal; the nonce is not random")
	}
	got, footer, err := Decrypt(k, a, nil)
	if err != nil || !bytes.Equal(got, payload) || len(footer) != 0 {
		t.Fatalf("Decrypt = %q, %q, %v", got, footer, err)
	}
}

// TestPAE checks the examples in the spec's Common.md.
func TestPAE(t *testing.T) {
	for _, tc := range []struct {
		pieces [][]byte
		want   string
	}{
		{nil, "\x00\x00\x00\x00\x00\x00\x00\x00"},
		{[][]byte{{}}, "\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"},
		{[][]byte{[]byte("test")}, "\x01\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00test"},
	} {
		if got := pae(tc.pieces...); string(got) != tc.want {
			t.Errorf("pae(%q) = %q, want %q", tc.pieces, got, tc.want)
		}
	}
}
