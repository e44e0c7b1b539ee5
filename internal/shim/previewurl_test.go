package shim_test

import (
	"errors"
	"testing"

	"github.com/paddockhq/paddock/internal/shim"
)

func TestPreviewURL(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tmpl := map[string]string{shim.PreviewURLTemplateEnv: "https://{port}-0123456789ab.preview.example.com/"}
	for _, tc := range []struct {
		name, port string
		env        map[string]string
		want       string
		wantErr    bool
		off        bool
	}{
		{name: "a port", port: "3000", env: tmpl, want: "https://3000-0123456789ab.preview.example.com/"},
		{name: "the highest port", port: "65535", env: tmpl, want: "https://65535-0123456789ab.preview.example.com/"},
		{name: "with the server's port", port: "8080",
			env:  map[string]string{shim.PreviewURLTemplateEnv: "http://{port}-0123456789ab.localhost:7070/"},
			want: "http://8080-0123456789ab.localhost:7070/"},
		{name: "port 0", port: "0", env: tmpl, wantErr: true},
		{name: "port too high", port: "65536", env: tmpl, wantErr: true},
		{name: "not a number", port: "http", env: tmpl, wantErr: true},
		{name: "leading zero", port: "03000", env: tmpl, wantErr: true},
		{name: "signed", port: "+80", env: tmpl, wantErr: true},
		{name: "previews off", port: "3000", env: map[string]string{}, wantErr: true, off: true},
		{name: "a template without the placeholder", port: "3000",
			env: map[string]string{shim.PreviewURLTemplateEnv: "http://x.localhost/"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := shim.PreviewURL(env(tc.env), tc.port)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("PreviewURL(%q) = %q, want an error", tc.port, got)
				}
				if off := errors.Is(err, shim.ErrPreviewsOff); off != tc.off {
					t.Fatalf("PreviewURL(%q): %v; previews-off error %v, want %v", tc.port, err, off, tc.off)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("PreviewURL(%q) = %q, %v; want %q", tc.port, got, err, tc.want)
			}
		})
	}
}
