package ledger_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/ledger"
)

func TestClassCost(t *testing.T) {
	p := ledger.Pricing{
		Default:    ledger.Rate{CPUMicros: 280, MemoryMicros: 70},
		Providers:  map[string]ledger.Rate{"gpu": {CPUMicros: 10_000, MemoryMicros: 1000}, "free": {}},
		FirstSlice: time.Minute,
	}
	cases := []struct {
		name     string
		provider string
		cpu, mem int64
		d        time.Duration
		want     int64
	}{
		{"one core, one GiB, one second", "docker", 1000, 1024, time.Second, 350},
		{"one core, one GiB, one hour", "docker", 1000, 1024, time.Hour, 1_260_000},
		{"half a core, 512 MiB, a minute", "docker", 500, 512, time.Minute, 60 * (140 + 35)},
		{"rounds down below a micro-credit", "docker", 100, 0, time.Millisecond, 0},
		{"fractions add up over time", "docker", 100, 0, 10 * time.Second, 280},
		{"provider override", "gpu", 2000, 2048, time.Second, 20_000 + 2000},
		{"free provider", "free", 16000, 65536, time.Hour, 0},
		{"nothing for no time", "docker", 1000, 1024, 0, 0},
		{"nothing for negative time", "docker", 1000, 1024, -time.Second, 0},
		{"a year of a big machine fits", "gpu", 1 << 24, 1 << 24, 365 * 24 * time.Hour, 5_807_548_661_760_000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := p.ClassOf(tc.provider, tc.cpu, tc.mem).Cost(tc.d)
			equal(t, "cost", got, tc.want)
		})
	}
	dear := ledger.Pricing{Default: ledger.Rate{CPUMicros: 100_000_000, MemoryMicros: 100_000_000}}
	if c := dear.ClassOf("x", math.MaxInt64, math.MaxInt64).Cost(math.MaxInt64); c != math.MaxInt64 {
		t.Fatalf("an overflowing cost = %d, want it saturated", c)
	}
	equal(t, "per hour", p.ClassOf("docker", 1000, 0).PerHour(), int64(1_008_000))
	equal(t, "free class", p.ClassOf("free", 1000, 1024).Free(), true)
}

func TestPricingValidate(t *testing.T) {
	ok := ledger.DefaultPricing
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := ledger.Free.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		name string
		edit func(*ledger.Pricing)
	}{
		{"negative cpu", func(p *ledger.Pricing) { p.Default.CPUMicros = -1 }},
		{"huge memory", func(p *ledger.Pricing) { p.Default.MemoryMicros = 1 << 40 }},
		{"bad provider", func(p *ledger.Pricing) { p.Providers = map[string]ledger.Rate{"x": {CPUMicros: -5}} }},
		{"unnamed provider", func(p *ledger.Pricing) { p.Providers = map[string]ledger.Rate{"": {}} }},
		{"no slice", func(p *ledger.Pricing) { p.FirstSlice = 0 }},
		{"slice too long", func(p *ledger.Pricing) { p.FirstSlice = 48 * time.Hour }},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			p := ledger.DefaultPricing
			tc.edit(&p)
			if err := p.Validate(); !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Fatalf("Validate = %v, want invalid argument", err)
			}
		})
	}
}

func TestParseProviderRates(t *testing.T) {
	got, err := ledger.ParseProviderRates(" docker=280:70, gpu=10000:1000 ,")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["docker"] != (ledger.Rate{CPUMicros: 280, MemoryMicros: 70}) || got["gpu"] != (ledger.Rate{CPUMicros: 10000, MemoryMicros: 1000}) {
		t.Fatalf("rates = %+v", got)
	}
	if got, err := ledger.ParseProviderRates(""); err != nil || len(got) != 0 {
		t.Fatalf("empty = %v, %v", got, err)
	}
	for _, s := range []string{"docker", "docker=1", "docker=a:b", "=1:2", "docker=1:2:3", "docker=1:2x"} {
		if _, err := ledger.ParseProviderRates(s); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("ParseProviderRates(%q) = %v, want invalid argument", s, err)
		}
	}
}

func TestAmounts(t *testing.T) {
	for _, tc := range []struct {
		credits float64
		want    int64
	}{{0, 0}, {1, 1_000_000}, {0.000001, 1}, {12.3456789, 12_345_679}, {1e9, 1e15}} {
		got, err := ledger.MicrosOf(tc.credits)
		if err != nil || got != tc.want {
			t.Errorf("MicrosOf(%v) = %d, %v; want %d", tc.credits, got, err, tc.want)
		}
	}
	for _, bad := range []float64{-1, 1e9 + 1, math.NaN(), math.Inf(1)} {
		if _, err := ledger.MicrosOf(bad); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("MicrosOf(%v) = %v, want invalid argument", bad, err)
		}
	}
	for m, want := range map[int64]string{0: "0.000000", 1: "0.000001", 1_500_000: "1.500000", -2_000_001: "-2.000001", math.MinInt64: "-9223372036854.775808"} {
		equal(t, "FormatCredits", ledger.FormatCredits(m), want)
	}
}
