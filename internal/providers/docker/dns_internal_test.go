package docker

import (
	"os"
	"strings"
	"testing"
)

// TestUpstreamResolvConf: an open gVisor sandbox is told the resolvers
// Docker's embedded server would forward to, picked as Docker picks them.
func TestUpstreamResolvConf(t *testing.T) {
	tests := []struct {
		name    string
		host    string // "" for no file
		systemd string // "" for no file
		want    []string
	}{
		{"host servers and search kept", "search corp.example\nnameserver 10.0.0.2\nnameserver 10.0.0.3\noptions ndots:2\n", "",
			[]string{"nameserver 10.0.0.2", "nameserver 10.0.0.3", "search corp.example", "options ndots:2"}},
		{"loopback and IPv6 servers left out", "nameserver 127.0.0.1\nnameserver ::1\nnameserver fd00::53\nnameserver 192.0.2.53\n", "",
			[]string{"nameserver 192.0.2.53"}},
		{"only loopback: Docker's fallback", "nameserver 127.0.0.1\n", "",
			[]string{"nameserver 8.8.8.8", "nameserver 8.8.4.4"}},
		{"no resolv.conf: Docker's fallback", "", "",
			[]string{"nameserver 8.8.8.8", "nameserver 8.8.4.4"}},
		{"systemd-resolved's stub: its upstream servers", "nameserver 127.0.0.53\nsearch lan\n", "nameserver 192.0.2.1\nsearch lan\n",
			[]string{"nameserver 192.0.2.1", "search lan"}},
		{"systemd-resolved's stub without its file: the fallback", "nameserver 127.0.0.53\n", "",
			[]string{"nameserver 8.8.8.8", "nameserver 8.8.4.4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{hostResolvConf: tc.host, systemdResolvConf: tc.systemd}
			read := func(path string) ([]byte, error) {
				if s := files[path]; s != "" {
					return []byte(s), nil
				}
				return nil, os.ErrNotExist
			}
			var got []string
			for _, line := range strings.Split(string(upstreamResolvConf(read)), "\n") {
				if line != "" && !strings.HasPrefix(line, "#") {
					got = append(got, line)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("resolv.conf lines = %q, want %q", got, tc.want)
			}
		})
	}
}
