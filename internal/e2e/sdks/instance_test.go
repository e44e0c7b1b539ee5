package sdks

import (
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// tsInstance and pyInstance are the runtimes the TypeScript and Python
// SDKs' servers serve in instance mode (paddock serve --instance), which
// each server makes as it starts.
const (
	tsInstance    = "ts-instance/main/svc"
	pyInstanceOrg = "pysdk-instance"
	pyInstance    = pyInstanceOrg + "/main/svc"
)

// prepareTSInstance gives the instance's workspace a secret for the
// instance tests to bind (sdk/typescript/test/instance.test.mjs).
func prepareTSInstance(t *testing.T, s *testenv.Served) { prepareInstance(t, s, "ts-instance") }

// prepareInstance gives org's workspace main, an instance's, the secret
// svc-token for the instance tests to bind.
func prepareInstance(t *testing.T, s *testenv.Served, org string) {
	t.Helper()
	c, err := pc.New(s.URL, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateSecret(t.Context(), org, "main", pc.CreateSecretRequest{Name: "svc-token", Value: "instance-secret"}); err != nil {
		t.Fatal(err)
	}
}
