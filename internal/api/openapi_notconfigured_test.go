package api_test

import (
	"encoding/json"
	"testing"
)

// agentOrProvider501 lists the operations that may answer 501, each with
// why: they reach a sandbox's agent or a capability a provider may lack
// (errdefs.NotImplemented is returned only there).
var agentOrProvider501 = map[string]string{
	"startRuntime":     "starts compute on the provider, which may lack what the runtime asks of it (its network policy, the agent)",
	"exec":             "dials the sandbox agent",
	"listProcesses":    "dials the sandbox agent",
	"getProcess":       "dials the sandbox agent",
	"attachProcess":    "dials the sandbox agent",
	"killAllProcesses": "dials the sandbox agent",
	"signalProcess":    "dials the sandbox agent",
	"writeStdin":       "dials the sandbox agent",
	"readFile":         "dials the sandbox agent",
	"writeFile":        "dials the sandbox agent",
	"deleteFile":       "dials the sandbox agent",
	"statFile":         "dials the sandbox agent",
	"listFiles":        "dials the sandbox agent",
	"mkdir":            "dials the sandbox agent",
	"rename":           "dials the sandbox agent",
	"downloadTar":      "dials the sandbox agent",
	"uploadTar":        "dials the sandbox agent",
	"terminal":         "dials the sandbox agent",
	"listPorts":        "asks the sandbox agent which ports listen",
	"prompt":           "runs the harness through the sandbox agent",
	"task":             "runs the harness through the sandbox agent",
	"sandboxStart":     "startRuntime, on the instance's runtime",
	"sandboxExec":      "exec, on the instance's runtime",
	"sandboxListPorts": "listPorts, on the instance's runtime",
	"sandboxPrompt":    "prompt, on the instance's runtime",
	"sandboxTask":      "task, on the instance's runtime",
	"buildTemplate":    "builds on the provider's engine (ImageBuilder)",
}

// TestOpenAPINoNotConfigured501: no operation declares a 501 but those that
// reach a sandbox's agent or a provider capability (agentOrProvider501). A
// feature that is not configured has no routes, so its operations answer
// 404 route_not_found (TestUnmountedFeaturesHaveNoRoutes), and a sign-in
// without its domain is refused when the server starts: nothing else can
// answer 501. Each operation listed is in the document and declares its
// 501, so the list holds no stale entry.
func TestOpenAPINoNotConfigured501(t *testing.T) {
	doc := specDoc(t)
	declares := map[string]bool{} // operationId → declares a 501
	for path, item := range doc.Paths {
		for method, body := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				OperationID string                     `json:"operationId"`
				Responses   map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(body, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			_, has := op.Responses["501"]
			declares[op.OperationID] = has
			if _, allowed := agentOrProvider501[op.OperationID]; has && !allowed {
				t.Errorf("%s %s (%s) declares a 501 it cannot answer: it reaches neither a sandbox's agent nor a provider capability", method, path, op.OperationID)
			}
		}
	}
	for id := range agentOrProvider501 {
		has, ok := declares[id]
		switch {
		case !ok:
			t.Errorf("%s is allowed a 501 but is not in the document", id)
		case !has:
			t.Errorf("%s is allowed a 501 but declares none: remove it from the list", id)
		}
	}
	if len(declares) == 0 {
		t.Fatal("the document has no operations")
	}
}
