package dialect

import (
	"encoding/json"
	"fmt"

	"github.com/paddockhq/paddock/internal/store"
)

// E2BSandbox names the E2B-compatible surface's records.
const E2BSandbox Resource = "e2b_sandbox"

// CheckE2BSandbox validates a new E2B sandbox and encodes its metadata.
func CheckE2BSandbox(s store.E2BSandbox) (metadata string, err error) {
	if err := Required(E2BSandbox, "runtime id", s.RuntimeID, "workspace id", s.WorkspaceID); err != nil {
		return "", err
	}
	md := s.Metadata
	if md == nil {
		md = map[string]string{}
	}
	b, err := json.Marshal(md)
	if err != nil {
		return "", fmt.Errorf("encode e2b sandbox metadata: %w", err)
	}
	return string(b), nil
}

// E2BMetadata decodes a stored E2B sandbox's metadata.
func E2BMetadata(stored string) (map[string]string, error) {
	md := map[string]string{}
	if err := json.Unmarshal([]byte(stored), &md); err != nil {
		return nil, fmt.Errorf("decode e2b sandbox metadata: %w", err)
	}
	return md, nil
}
