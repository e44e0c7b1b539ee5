package api_test

import (
	"testing"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestCollectedExecCutAnswersTheDoor: a collected exec whose caller's
// access ends while it runs is ended, and answers what the door answers
// its credential now: 403 role_too_low for a member made a viewer (the
// key still holds: it reads the runtime), 401 invalid_api_key once the
// key is revoked.
func TestCollectedExecCutAnswersTheDoor(t *testing.T) {
	env, rt, _ := terminalEnv(t, shim.Options{}, api.Limits{})
	bob := consoleMember(t, env, "bob@example.com", "member")
	sdk, err := client.New(env.URL, bob.Key)
	if err != nil {
		t.Fatal(err)
	}
	admin := adminClient(t, env)
	// cut runs a collected sleep as bob, ends his access with end once
	// the sleep runs, and returns the exec's answer.
	cut := func(word string, end func()) error {
		t.Helper()
		answered := make(chan error, 1)
		go func() {
			_, err := sdk.Exec(t.Context(), "acme", "dev", rt, client.ExecRequest{Argv: []string{"sh", "-c", "sleep 300", word}})
			answered <- err
		}()
		testenv.WaitFor(t, "bob's sleep running", func() bool {
			ps, err := admin.ListProcesses(t.Context(), "acme", "dev", rt)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				if len(p.Argv) == 4 && p.Argv[3] == word && p.Running {
					return true
				}
			}
			return false
		})
		end()
		return <-answered
	}

	err = cut("demoted", func() {
		env.Must(t, 200, "PATCH", "/api/v1/org/acme/members/bob@example.com", client.SetRoleRequest{Role: "viewer"})
	})
	if !client.IsCode(err, "role_too_low") {
		t.Fatalf("a collected exec of a member made a viewer meanwhile: %v, want 403 role_too_low", err)
	}
	if _, err := sdk.GetRuntime(t.Context(), "acme", "dev", rt); err != nil {
		t.Fatalf("the viewer's key no longer reads the runtime: %v", err)
	}

	env.Must(t, 200, "PATCH", "/api/v1/org/acme/members/bob@example.com", client.SetRoleRequest{Role: "member"})
	err = cut("revoked", func() { env.Must(t, 204, "DELETE", "/api/v1/org/acme/keys/"+bob.ID, nil) })
	if !client.IsCode(err, "invalid_api_key") {
		t.Fatalf("a collected exec of a key revoked meanwhile: %v, want 401 invalid_api_key", err)
	}
}
