package store

import "testing"

func TestIsID(t *testing.T) {
	for s, want := range map[string]bool{
		"0b5e4a3c-4c1f-4d2e-9a7b-3f6e2d1c0b9a":      true,
		"0B5E4A3C-4C1F-4D2E-9A7B-3F6E2D1C0B9A":      true,
		"0b5e4a3c4c1f4d2e9a7b3f6e2d1c0b9a":          false, // 32 hex digits: not the stored form
		"{0b5e4a3c-4c1f-4d2e-9a7b-3f6e2d1c0b9a}":    false,
		"urn:uuid:0b5e4a3c-4c1f-4d2e-9a7b-3f6e2d1c": false,
		"0b5e4a3c-4c1f-4d2e-9a7b-3f6e2d1c0b9z":      false,
		"web":                                       false,
		"":                                          false,
	} {
		if got := IsID(s); got != want {
			t.Errorf("IsID(%q) = %v; want %v", s, got, want)
		}
	}
}
