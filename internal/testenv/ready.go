package testenv

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// WaitReconciled waits until the server at url has finished its start-up
// reconciliation (its /readyz check "reconciliation" passes), as a careful
// client would: until then it serves, but answers 503 reconciling for the
// runtimes it has not reached. logs is shown if it never does.
func WaitReconciled(t testing.TB, url string, logs fmt.Stringer) {
	t.Helper()
	Eventually(t, func() error {
		var ready struct {
			Checks []struct {
				Name string `json:"name"`
				OK   bool   `json:"ok"`
			} `json:"checks"`
		}
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&ready)
			resp.Body.Close()
		}
		for _, c := range ready.Checks {
			if c.Name == "reconciliation" && c.OK {
				return nil
			}
		}
		return fmt.Errorf("start-up reconciliation did not finish (%v, %+v)\n%s", err, ready, logs)
	})
}
