package server

import (
	"fmt"
	"os"
	"regexp"
	"testing"
)

// TestReplicaID: a configured replica id is kept; without one each start
// is a new replica, <hostname>-<pid>-<random>.
func TestReplicaID(t *testing.T) {
	if got := replicaID("replica-a"); got != "replica-a" {
		t.Fatalf("configured replica id became %q", got)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(fmt.Sprintf(`^%s-%d-[0-9a-f]{8}$`, regexp.QuoteMeta(host), os.Getpid()))
	a, b := replicaID(""), replicaID("")
	if !re.MatchString(a) || !re.MatchString(b) || a == b {
		t.Fatalf("default replica ids %q and %q; want two different <hostname>-<pid>-<random>", a, b)
	}
}
