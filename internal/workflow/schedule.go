package workflow

import (
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// MinInterval is the shortest time a schedule leaves between two runs.
const MinInterval = time.Second

// Schedule says when a workflow runs again.
type Schedule interface {
	// Next is the first time after t it runs.
	Next(t time.Time) time.Time
}

var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule reads a schedule: a cron expression of five fields
// (minute, hour, day of month, month, day of week; in UTC), a descriptor
// (@hourly, @daily, …), "@every DURATION" (Go's syntax: 90s, 1h30m), or a
// bare duration, which is the same as @every. 400 invalid_schedule
// otherwise, and for an interval under MinInterval.
func ParseSchedule(s string) (Schedule, error) {
	every, isEvery := strings.CutPrefix(s, "@every ")
	if d, err := time.ParseDuration(s); err == nil {
		every, isEvery = s, true
		s = "@every " + d.String()
	}
	if d, err := time.ParseDuration(strings.TrimSpace(every)); isEvery && err == nil && d < MinInterval {
		return nil, errdefs.InvalidArgument(CodeSchedule, "a schedule's interval is at least %s", MinInterval)
	}
	sched, err := parser.Parse(s)
	if err != nil {
		return nil, errdefs.InvalidArgument(CodeSchedule,
			"schedule %q is neither a cron expression of five fields, a descriptor such as @hourly, nor an interval such as @every 10m", s)
	}
	return utc{sched}, nil
}

// utc reads a cron schedule in UTC, whatever the server's zone.
type utc struct{ s cron.Schedule }

func (u utc) Next(t time.Time) time.Time { return u.s.Next(t.UTC()).UTC() }
