package workflow

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// TestParseSchedule: cron expressions (in UTC), descriptors and
// intervals give the next times they say; anything else, and an interval
// under a second, is invalid_schedule.
func TestParseSchedule(t *testing.T) {
	at := time.Date(2026, 3, 4, 10, 7, 30, 0, time.FixedZone("UTC+2", 2*60*60)) // 08:07:30 UTC
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"*/5 * * * *", time.Date(2026, 3, 4, 8, 10, 0, 0, time.UTC)},
		{"0 9 * * *", time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)},
		{"@hourly", time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)},
		{"@every 90s", time.Date(2026, 3, 4, 8, 9, 0, 0, time.UTC)},
		{"10m", time.Date(2026, 3, 4, 8, 17, 30, 0, time.UTC)},
	} {
		s, err := ParseSchedule(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if got := s.Next(at); !got.Equal(tc.want) || got.Location() != time.UTC {
			t.Fatalf("%q: next %v, want %v", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{"", "every tuesday", "* * *", "@every 500ms", "200ms", "@every soon", "61 * * * *"} {
		_, err := ParseSchedule(bad)
		if pe, ok := errdefs.Public(err); !ok || pe.Code != CodeSchedule {
			t.Fatalf("%q: err = %v, want invalid_schedule", bad, err)
		}
	}
}
