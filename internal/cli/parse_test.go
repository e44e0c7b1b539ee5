package cli

import (
	"errors"
	"testing"
	"time"
)

func TestParseCPU(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "1", want: 1000},
		{in: "0.5", want: 500},
		{in: "2.25", want: 2250},
		{in: "250m", want: 250},
		{in: " 3 ", want: 3000},
		{in: "0", wantErr: true},
		{in: "-1", wantErr: true},
		{in: "0m", wantErr: true},
		{in: "0.0001", wantErr: true},
		{in: "NaN", wantErr: true},
		{in: "Inf", wantErr: true},
		{in: "1e9", wantErr: true},
		{in: "lots", wantErr: true},
		{in: "1.5m", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseCPU(tt.in)
			checkParse(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestParseMemory(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "512", want: 512},
		{in: "512M", want: 512},
		{in: "512Mi", want: 512},
		{in: "512MB", want: 512},
		{in: "512 MiB", want: 512},
		{in: "2G", want: 2048},
		{in: "1.5Gi", want: 1536},
		{in: "1gb", want: 1024},
		{in: "0", wantErr: true},
		{in: "0.2", wantErr: true},
		{in: "1T", wantErr: true},
		{in: "-5M", wantErr: true},
		{in: "M", wantErr: true},
		{in: "99999999999999G", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseMemory(tt.in)
			checkParse(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestDurationSeconds(t *testing.T) {
	tests := []struct {
		d       time.Duration
		zeroOK  bool
		want    int64
		wantErr bool
	}{
		{d: 90 * time.Second, want: 90},
		{d: 1500 * time.Millisecond, want: 2},
		{d: time.Nanosecond, want: 1},
		{d: 0, zeroOK: true, want: 0},
		{d: 0, wantErr: true},
		{d: -time.Second, zeroOK: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.d.String(), func(t *testing.T) {
			got, err := durationSeconds("duration", tt.d, tt.zeroOK)
			checkParse(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func checkParse(t *testing.T, got int64, err error, want int64, wantErr bool) {
	t.Helper()
	if wantErr {
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Fatalf("got %d, %v; want a usage error", got, err)
		}
		return
	}
	if err != nil || got != want {
		t.Fatalf("got %d, %v; want %d", got, err, want)
	}
}
