package api

import (
	"bytes"
	"encoding/json"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// The blueprint's metadata_json on a runtime's creation: a JSON-encoded
// object whose runtime_backend names the provider.

// Public codes of metadata_json.
const (
	CodeInvalidMetadataJSON    = "invalid_metadata_json"
	CodeRuntimeBackendConflict = "runtime_backend_conflict"
)

// blueprintMetadata is what metadata_json may hold.
type blueprintMetadata struct {
	RuntimeBackend string `json:"runtime_backend"`
}

// providerOf is the provider a runtime config names: provider, or
// metadata_json's runtime_backend, which must agree when both are given.
// Whether the installation offers it is the runtime service's to check,
// as for provider.
func providerOf(provider, metadataJSON string) (string, error) {
	if metadataJSON == "" {
		return provider, nil
	}
	var m blueprintMetadata
	dec := json.NewDecoder(bytes.NewReader([]byte(metadataJSON)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil || dec.More() || !isObject(metadataJSON) {
		return "", errdefs.InvalidArgument(CodeInvalidMetadataJSON,
			`metadata_json must be a JSON-encoded object whose only key is runtime_backend, a string, such as "{\"runtime_backend\":\"gvisor\"}"`)
	}
	switch {
	case m.RuntimeBackend == "":
		return provider, nil
	case provider == "":
		return m.RuntimeBackend, nil
	case provider != m.RuntimeBackend:
		return "", errdefs.InvalidArgument(CodeRuntimeBackendConflict,
			"provider %q and metadata_json's runtime_backend %q name different providers; give one", provider, m.RuntimeBackend)
	}
	return provider, nil
}

// isObject reports whether s is a JSON object (not null, not another
// value that decodes into a struct's zero).
func isObject(s string) bool {
	b := bytes.TrimSpace([]byte(s))
	return len(b) > 0 && b[0] == '{'
}
