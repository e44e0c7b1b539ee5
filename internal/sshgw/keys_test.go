package sshgw_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/paddockhq/paddock/internal/sshgw"
)

func TestRuntimePrefix(t *testing.T) {
	const id = "0123abcd-ef01-4a00-8b00-0123456789ab"
	cases := []struct {
		user, want string
		ok         bool
	}{
		{id, id, true},
		{"0123ABCD-EF01-4A00-8B00-0123456789AB", id, true},
		{"0123abcdef01", "0123abcd-ef01", true},
		{"0123abcdef014a", "0123abcd-ef01-4a", true},
		{"0123abcdef014a008b000123456789ab", id, true},
		{"0123abcdef0", "", false},                          // too short
		{"0123abcdef014a008b000123456789ab0", "", false},    // too long
		{"0123abcd-ef01", "", false},                        // dashes only in a whole id
		{"0123abcdef0g", "", false},                         // not hex
		{"0123abcd-ef01-4a00-8b00-0123456789ag", "", false}, // not a UUID
		{"root", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		got, ok := sshgw.RuntimePrefix(tc.user)
		if got != tc.want || ok != tc.ok {
			t.Errorf("RuntimePrefix(%q) = %q, %v; want %q, %v", tc.user, got, ok, tc.want, tc.ok)
		}
	}
	if got := sshgw.UserName(id); got != "0123abcdef01" {
		t.Errorf("UserName = %q", got)
	}
}

func TestParsePublicKey(t *testing.T) {
	const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILT6y1FZX/RfKHNp450GRRFDFvMWsBPX3gDunIIMcWuj"
	// ssh-keygen -lf prints this fingerprint for the key.
	const fp = "SHA256:0Ob0EcXySpV3dNmU6owMp6cHpiT2fi8C2hAxpqzYq54"
	norm, gotFP, comment, err := sshgw.ParsePublicKey("  " + key + " alice@laptop\n")
	if err != nil || norm != key || comment != "alice@laptop" || gotFP != fp {
		t.Fatalf("ParsePublicKey = %q %q %q %v", norm, gotFP, comment, err)
	}
	for _, bad := range []string{"", "ssh-ed25519", "ssh-ed25519 AAAA", key + "\n" + key, `from="10.0.0.1" ` + key, "x" + key} {
		if _, _, _, err := sshgw.ParsePublicKey(bad); err == nil {
			t.Errorf("ParsePublicKey(%q) accepted it", bad)
		}
	}
}

// TestLoadHostKey: made on first use, 0600, and the same key after.
func TestLoadHostKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", sshgw.HostKeyFile)
	k1, err := sshgw.LoadHostKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	k2, err := sshgw.LoadHostKey(path)
	if err != nil || sshgw.AuthorizedKey(k1.PublicKey()) != sshgw.AuthorizedKey(k2.PublicKey()) || k1.PublicKey().Type() != "ssh-ed25519" {
		t.Fatalf("second load: %v", err)
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sshgw.LoadHostKey(path); err == nil {
		t.Fatal("a garbled key file loaded")
	}
}
