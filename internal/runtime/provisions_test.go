package runtime

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestProvisionBesideStep: a step run beside a provision's others keeps
// the provision in flight after its own end until the step is through; the
// step is recorded, its failure with it, and the provision ends with the
// outcome end was given. What runs after the step sees the provision
// ended.
func TestProvisionBesideStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log provisionLog
		tr := log.begin(Provision{RuntimeID: "rt-1", Kind: "start"}, time.Now)
		release := make(chan struct{})
		after := make(chan []Provision, 1)
		tr.besideStep("adopt_link", func() error { <-release; return errors.New("refused") }, func(err error) {
			if err == nil {
				t.Error("the step's failure did not reach after")
			}
			after <- log.snapshot()
		})
		if err := tr.step("mark_running", func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		tr.end(nil)
		synctest.Wait()
		if got := log.snapshot(); len(got) != 1 || got[0].State != "running" {
			t.Fatalf("with a step beside it still running, after its end: %+v; want it in flight", got)
		}
		close(release)
		got := <-after
		if len(got) != 1 || got[0].State != "succeeded" || len(got[0].Steps) != 2 ||
			got[0].Steps[0].Name != "mark_running" || got[0].Steps[1].Name != "adopt_link" || got[0].Steps[1].Error == "" {
			t.Fatalf("once the step beside it was through: %+v; want it succeeded with both steps, the second failed", got)
		}

		// Without a step beside it, end ends it.
		tr = log.begin(Provision{RuntimeID: "rt-2", Kind: "start"}, time.Now)
		tr.end(errors.New("boom"))
		if got := log.snapshot(); got[0].RuntimeID != "rt-2" || got[0].State != "failed" {
			t.Fatalf("ended without a step beside it: %+v", got[0])
		}
	})
}
