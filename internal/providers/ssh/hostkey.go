package ssh

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// The machine's host key is pinned: either one key in the config
// (HostKey, as authorized_keys writes it) or a known_hosts file
// (KnownHosts). A machine that shows another key, or one that the file
// does not know, is refused before anything is sent to it.

// hostKeyError is a host key that was refused: changed (the machine shows
// another key than the pinned one) or unknown (nothing pins one for it).
type hostKeyError struct {
	changed bool
	got     ssh.PublicKey
}

func (e *hostKeyError) Error() string {
	if e.changed {
		return "the host key changed"
	}
	return "the host key is unknown"
}

// public is the error a caller sees, naming the key the machine showed.
func (e *hostKeyError) public(addr string) error {
	fp := ssh.FingerprintSHA256(e.got)
	if e.changed {
		return errdefs.FailedPrecondition(CodeHostKeyChanged,
			"the machine %s shows host key %s %s, not the pinned one: refused (if the machine's key was changed on purpose, pin the new one)", addr, e.got.Type(), fp)
	}
	return errdefs.FailedPrecondition(CodeHostKeyUnknown,
		"the machine %s shows host key %s %s, which is not pinned: refused (add it to the known_hosts file or the provider's host_key)", addr, e.got.Type(), fp)
}

// hostKeyCheck returns the callback that pins the machine's key, and the
// key algorithms to ask for (those pinned, so a machine with several keys
// shows the pinned one).
func hostKeyCheck(pinned, knownHostsFile, addr string) (ssh.HostKeyCallback, []string, error) {
	switch {
	case pinned != "" && knownHostsFile != "":
		return nil, nil, errors.New("name either a host key or a known_hosts file, not both")
	case pinned != "":
		want, _, _, _, err := ssh.ParseAuthorizedKey([]byte(pinned))
		if err != nil {
			return nil, nil, fmt.Errorf("the host key cannot be read: %w", err)
		}
		cb := func(_ string, _ net.Addr, got ssh.PublicKey) error {
			if string(got.Marshal()) != string(want.Marshal()) {
				return &hostKeyError{changed: true, got: got}
			}
			return nil
		}
		return cb, algorithmsFor([]ssh.PublicKey{want}), nil
	case knownHostsFile != "":
		if _, err := os.Stat(knownHostsFile); err != nil {
			return nil, nil, fmt.Errorf("the known_hosts file cannot be read: %w", err)
		}
		kh, err := knownhosts.New(knownHostsFile)
		if err != nil {
			return nil, nil, fmt.Errorf("the known_hosts file cannot be read: %w", err)
		}
		cb := func(host string, remote net.Addr, got ssh.PublicKey) error {
			err := kh(host, remote, got)
			var ke *knownhosts.KeyError
			if errors.As(err, &ke) {
				return &hostKeyError{changed: len(ke.Want) > 0, got: got}
			}
			return err
		}
		return cb, knownAlgorithms(knownHostsFile, addr), nil
	}
	return nil, nil, errors.New("the machine's host key must be pinned: name a host key or a known_hosts file")
}

// knownAlgorithms are the key algorithms known_hosts holds for addr, so
// the machine shows a key the file can check (nil: any).
func knownAlgorithms(file, addr string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	host := knownhosts.Normalize(addr)
	var keys []ssh.PublicKey
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || strings.HasPrefix(f[0], "#") || strings.HasPrefix(f[0], "@") {
			continue
		}
		match := false
		for _, h := range strings.Split(f[0], ",") {
			if h == host || knownhosts.Normalize(h) == host {
				match = true
			}
		}
		if !match {
			continue
		}
		if k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(strings.Join(f[1:], " "))); err == nil {
			keys = append(keys, k)
		}
	}
	return algorithmsFor(keys)
}

// algorithmsFor are the host key algorithms that verify keys.
func algorithmsFor(keys []ssh.PublicKey) []string {
	var out []string
	for _, k := range keys {
		if k.Type() == ssh.KeyAlgoRSA {
			out = append(out, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
			continue
		}
		out = append(out, k.Type())
	}
	return out
}
