package ledger

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"sort"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// MicrosPerCredit: amounts are kept in millionths of a credit.
const MicrosPerCredit = 1_000_000

// Rate is the price of a provider's resources: micro-credits per second
// for one core (1000 CPU millis) and for one GiB of memory.
type Rate struct {
	CPUMicros    int64 // per core-second
	MemoryMicros int64 // per GiB-second
}

// maxRate bounds a rate (100 credits per core- or GiB-second) so that the
// arithmetic below cannot overflow.
const maxRate = 100 * MicrosPerCredit

// Pricing is an installation's price list.
type Pricing struct {
	// Default prices every provider without an entry in Providers.
	Default Rate
	// Providers overrides Default per provider name.
	Providers map[string]Rate
	// FirstSlice is how much compute a start or resume prepays; an org
	// that cannot pay for it cannot start.
	FirstSlice time.Duration
	// SnapshotMicros is what a snapshot's storage costs: micro-credits per
	// GiB-hour, charged by the settler while the snapshot exists.
	SnapshotMicros int64
	// Hourly, when set, names the providers priced by the hour instead of
	// by their resources (a machine an org brought with a cost per hour):
	// micro-credits per hour for each sandbox on it, and whether provider
	// is one.
	Hourly func(provider string) (microsPerHour int64, ok bool)
}

// DefaultPricing is about one credit per core-hour and a quarter of a
// credit per GiB-hour, with the first minute prepaid.
var DefaultPricing = Pricing{
	Default:        Rate{CPUMicros: 280, MemoryMicros: 70},
	FirstSlice:     time.Minute,
	SnapshotMicros: DefaultSnapshotMicros,
}

// DefaultSnapshotMicros is a hundredth of a credit per GiB-hour of a
// snapshot's storage.
const DefaultSnapshotMicros = 10_000

// Free prices nothing: compute costs nothing, so nothing is held, charged
// or paused for lack of credits.
var Free = Pricing{FirstSlice: time.Minute}

// Validate checks p.
func (p Pricing) Validate() error {
	check := func(what string, r Rate) error {
		if r.CPUMicros < 0 || r.CPUMicros > maxRate || r.MemoryMicros < 0 || r.MemoryMicros > maxRate {
			return errdefs.InvalidArgument("invalid_pricing", "%s: rates must be between 0 and %d micro-credits per second", what, maxRate)
		}
		return nil
	}
	if err := check("default rate", p.Default); err != nil {
		return err
	}
	for name, r := range p.Providers {
		if name == "" {
			return errdefs.InvalidArgument("invalid_pricing", "a provider rate needs a provider name")
		}
		if err := check("rate of provider "+name, r); err != nil {
			return err
		}
	}
	if p.SnapshotMicros < 0 || p.SnapshotMicros > maxRate {
		return errdefs.InvalidArgument("invalid_pricing", "the snapshot rate must be between 0 and %d micro-credits per GiB-hour", maxRate)
	}
	if p.FirstSlice < time.Second || p.FirstSlice > 24*time.Hour {
		return errdefs.InvalidArgument("invalid_pricing", "the first slice must be between 1s and 24h, not %s", p.FirstSlice)
	}
	return nil
}

// RateOf returns the rate of a provider.
func (p Pricing) RateOf(provider string) Rate {
	if r, ok := p.Providers[provider]; ok {
		return r
	}
	return p.Default
}

// ClassOf returns the resource class of compute with the given provider
// and resources.
func (p Pricing) ClassOf(provider string, cpuMillis, memoryMB int64) Class {
	if p.Hourly != nil {
		if h, ok := p.Hourly(provider); ok {
			return Class{perHour: min(max(h, 0), maxHourly)}
		}
	}
	r := p.RateOf(provider)
	clamp := func(v int64) uint64 { return uint64(min(max(v, 0), 1<<24)) }
	// Micro-credits per second, times 1000 (millis per core) times 1024
	// (MiB per GiB): at most 2^24·2^27·2^10 per term.
	num := clamp(cpuMillis)*uint64(r.CPUMicros)*1024 + clamp(memoryMB)*uint64(r.MemoryMicros)*1000
	return Class{num: num}
}

// Class is a resource class: what one sandbox's compute costs per second.
type Class struct {
	num     uint64 // micro-credits per second × 1000 × 1024
	perHour int64  // or, when set, micro-credits per hour
}

// maxHourly bounds an hourly price: a million credits an hour.
const maxHourly = 1_000_000 * MicrosPerCredit

// den turns Class.num times microseconds into micro-credits.
const den = 1000 * 1024 * uint64(time.Second/time.Microsecond)

// Free reports whether the class costs nothing.
func (c Class) Free() bool { return c.num == 0 && c.perHour == 0 }

// Cost is what d of compute costs, rounded down to a micro-credit.
func (c Class) Cost(d time.Duration) int64 {
	if d <= 0 || c.Free() {
		return 0
	}
	if c.perHour > 0 {
		hi, lo := bits.Mul64(uint64(c.perHour), uint64(d/time.Microsecond))
		hour := uint64(time.Hour / time.Microsecond)
		if hi >= hour {
			return math.MaxInt64
		}
		q, _ := bits.Div64(hi, lo, hour)
		return int64(min(q, math.MaxInt64))
	}
	hi, lo := bits.Mul64(c.num, uint64(d/time.Microsecond))
	if hi >= den {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, den)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// PerHour is what an hour of compute costs.
func (c Class) PerHour() int64 { return c.Cost(time.Hour) }

// StorageCost is what size bytes kept for d cost at perGiBHour
// micro-credits per GiB-hour, rounded down to a micro-credit.
func StorageCost(size int64, d time.Duration, perGiBHour int64) int64 {
	if size <= 0 || d <= 0 || perGiBHour <= 0 {
		return 0
	}
	n := new(big.Int).Mul(big.NewInt(size), big.NewInt(perGiBHour))
	n.Mul(n, big.NewInt(int64(d/time.Microsecond)))
	n.Quo(n, new(big.Int).Mul(big.NewInt(1<<30), big.NewInt(int64(time.Hour/time.Microsecond))))
	if !n.IsInt64() {
		return math.MaxInt64
	}
	return n.Int64()
}

// FormatCredits formats micro-credits as a decimal number of credits with
// six places.
func FormatCredits(m int64) string {
	sign := ""
	u := uint64(m)
	if m < 0 {
		sign, u = "-", uint64(-(m+1))+1
	}
	return fmt.Sprintf("%s%d.%06d", sign, u/MicrosPerCredit, u%MicrosPerCredit)
}

// Credits converts micro-credits to credits, for the API.
func Credits(m int64) float64 { return float64(m) / MicrosPerCredit }

// MaxAmountMicros bounds one grant or balance: a billion credits.
const MaxAmountMicros = 1_000_000_000 * MicrosPerCredit

// MicrosOf converts an amount of credits from the API to micro-credits,
// rounded to the nearest. It accepts 0 to MaxAmountMicros.
func MicrosOf(credits float64) (int64, error) {
	if math.IsNaN(credits) || math.IsInf(credits, 0) || credits < 0 || credits > MaxAmountMicros/MicrosPerCredit {
		return 0, errdefs.InvalidArgument("invalid_amount", "an amount must be a number of credits from 0 to %d", MaxAmountMicros/MicrosPerCredit)
	}
	return int64(math.Round(credits * MicrosPerCredit)), nil
}

// ParseProviderRates reads provider rates written as
// "name=cpu:memory,name=cpu:memory" (micro-credits per core-second and per
// GiB-second), as the configuration and flags give them.
func ParseProviderRates(s string) (map[string]Rate, error) {
	out := map[string]Rate{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, spec, ok := strings.Cut(part, "=")
		var r Rate
		if ok {
			_, err := fmt.Sscanf(spec, "%d:%d", &r.CPUMicros, &r.MemoryMicros)
			ok = err == nil && fmt.Sprintf("%d:%d", r.CPUMicros, r.MemoryMicros) == strings.TrimSpace(spec)
		}
		if !ok || strings.TrimSpace(name) == "" {
			return nil, errdefs.InvalidArgument("invalid_pricing", "provider rate %q is not name=cpu:memory (micro-credits per core-second and per GiB-second)", part)
		}
		out[strings.TrimSpace(name)] = r
	}
	return out, nil
}

// String writes p's rates the way ParseProviderRates reads them.
func (p Pricing) String() string {
	names := make([]string, 0, len(p.Providers))
	for n := range p.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := []string{fmt.Sprintf("default=%d:%d", p.Default.CPUMicros, p.Default.MemoryMicros)}
	for _, n := range names {
		r := p.Providers[n]
		parts = append(parts, fmt.Sprintf("%s=%d:%d", n, r.CPUMicros, r.MemoryMicros))
	}
	return strings.Join(parts, ",") + " first_slice=" + p.FirstSlice.String() + fmt.Sprintf(" snapshot=%d", p.SnapshotMicros)
}
