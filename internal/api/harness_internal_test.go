package api

import (
	"reflect"
	"testing"

	"github.com/paddockhq/paddock/internal/harness"
)

func TestHarnessInfo(t *testing.T) {
	h, _ := harness.Lookup("claude-code")
	info := harnessInfo(h)
	if info.Name != h.Name || info.Binary != "claude" || info.WrittenAgainst != h.WrittenAgainst || !reflect.DeepEqual(info.Secrets, h.Secrets) {
		t.Errorf("harnessInfo() = %+v", info)
	}
}
