package store

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestNetworkConfigReadsPlainString: runtimes stored before the egress
// policy became an object keep their mode.
func TestNetworkConfigReadsPlainString(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want NetworkConfig
	}{
		{`{"network":"open"}`, NetworkConfig{Mode: "open"}},
		{`{"network":{"mode":"proxy","allow":["pypi.org"],"deny":["10.0.0.0/8"]}}`, NetworkConfig{Mode: "proxy", Allow: []string{"pypi.org"}, Deny: []string{"10.0.0.0/8"}}},
	} {
		var c RuntimeConfig
		if err := json.Unmarshal([]byte(tc.in), &c); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if !reflect.DeepEqual(c.Network, tc.want) {
			t.Errorf("%s: network = %+v, want %+v", tc.in, c.Network, tc.want)
		}
	}
	var c RuntimeConfig
	if err := json.Unmarshal([]byte(`{"network":7}`), &c); err == nil {
		t.Error("a number was read as a network policy")
	}
}
