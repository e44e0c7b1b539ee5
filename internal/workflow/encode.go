package workflow

import (
	"encoding/json"

	"github.com/paddockhq/paddock/internal/store"
)

// encodeWorkflow is w with spec as its stored document.
func encodeWorkflow(w store.Workflow, spec Spec) (Workflow, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return Workflow{}, err
	}
	w.Spec = b
	return Workflow{Workflow: w, Spec: spec}, nil
}

// encode writes r's state into its stored document.
func (r *Run) encode() error {
	b, err := json.Marshal(r.State)
	if err != nil {
		return err
	}
	r.WorkflowRun.State = b
	return nil
}
