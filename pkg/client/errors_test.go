package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/paddockhq/paddock/pkg/client"
)

func TestErrorKinds(t *testing.T) {
	kinds := []error{
		client.ErrNotFound, client.ErrInvalidArgument, client.ErrConflict, client.ErrFailedPrecondition,
		client.ErrUnavailable, client.ErrNotImplemented, client.ErrPermissionDenied, client.ErrUnauthenticated,
		client.ErrResourceExhausted, client.ErrPaymentRequired, client.ErrInternal, client.ErrUnknown,
	}
	tests := []struct {
		status int
		want   error
	}{
		{400, client.ErrInvalidArgument},
		{401, client.ErrUnauthenticated},
		{402, client.ErrPaymentRequired},
		{403, client.ErrPermissionDenied},
		{404, client.ErrNotFound},
		{409, client.ErrConflict},
		{412, client.ErrFailedPrecondition},
		{413, client.ErrResourceExhausted},
		{422, client.ErrFailedPrecondition},
		{429, client.ErrResourceExhausted},
		{500, client.ErrInternal},
		{501, client.ErrNotImplemented},
		{502, client.ErrUnavailable},
		{503, client.ErrUnavailable},
		{504, client.ErrUnavailable},
		{507, client.ErrInternal},
		{418, client.ErrUnknown},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			err := error(&client.Error{StatusCode: tt.status, Code: "x", Message: "y"})
			wrapped := fmt.Errorf("doing things: %w", err)
			for _, k := range kinds {
				if got := errors.Is(wrapped, k); got != (k == tt.want) {
					t.Errorf("errors.Is(%d, %v) = %v", tt.status, k, got)
				}
			}
		})
	}
}

func TestErrorBodies(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		header      string // X-Request-Id
		body        string
		want        client.Error
	}{
		{
			name: "api error", status: 409, contentType: "application/json",
			body: `{"code":"runtime_has_no_sandbox","message":"runtime has no sandbox","request_id":"r1"}`,
			want: client.Error{StatusCode: 409, Code: "runtime_has_no_sandbox", Message: "runtime has no sandbox", RequestID: "r1"},
		},
		{
			name: "api error with unknown fields", status: 402, contentType: "application/json",
			body: `{"code":"insufficient_credits","message":"no credits","details":{"balance":0}}`,
			want: client.Error{StatusCode: 402, Code: "insufficient_credits", Message: "no credits"},
		},
		{
			name: "plain text", status: 502, contentType: "text/plain", header: "req-9",
			body: "upstream\nconnect error\n",
			want: client.Error{StatusCode: 502, Code: "unavailable", Message: "upstream connect error", RequestID: "req-9"},
		},
		{
			name: "html page", status: 404, contentType: "text/html",
			body: "<html><body><h1>404</h1></body></html>",
			want: client.Error{StatusCode: 404, Code: "not_found", Message: "Not Found"},
		},
		{
			name: "empty body", status: 401,
			want: client.Error{StatusCode: 401, Code: "unauthenticated", Message: "Unauthorized"},
		},
		{
			name: "json without a code", status: 500, contentType: "application/json",
			body: `{"error":"boom"}`,
			want: client.Error{StatusCode: 500, Code: "internal", Message: `{"error":"boom"}`},
		},
		{
			name: "json with a code and no message", status: 429, contentType: "application/json",
			body: `{"code":"rate_limited"}`,
			want: client.Error{StatusCode: 429, Code: "rate_limited", Message: "Too Many Requests"},
		},
		{
			name: "binary garbage", status: 503,
			body: "\x00\x01\x02\xff",
			want: client.Error{StatusCode: 503, Code: "unavailable", Message: "Service Unavailable"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				if tt.header != "" {
					w.Header().Set("X-Request-Id", tt.header)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			t.Cleanup(srv.Close)
			c, err := client.New(srv.URL, "pdk_x")
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetOrg(context.Background(), "acme")
			var got *client.Error
			if !errors.As(err, &got) {
				t.Fatalf("err = %v (%T), want *client.Error", err, err)
			}
			if *got != tt.want {
				t.Fatalf("got %+v\nwant %+v", *got, tt.want)
			}
			if !client.IsCode(err, tt.want.Code) || client.Code(err) != tt.want.Code {
				t.Fatalf("IsCode/Code disagree with %q", tt.want.Code)
			}
			if got.Error() == "" {
				t.Fatal("empty Error()")
			}
		})
	}
}

func TestCodeMatching(t *testing.T) {
	apiErr := &client.Error{StatusCode: 409, Code: "runtime_busy", Message: "busy"}
	tests := []struct {
		name     string
		err      error
		code     string
		conflict bool
		notFound bool
	}{
		{"direct", apiErr, "runtime_busy", true, false},
		{"wrapped", fmt.Errorf("start: %w", apiErr), "runtime_busy", true, false},
		{"not found", &client.Error{StatusCode: 404, Code: "org_not_found"}, "org_not_found", false, true},
		{"other error", errors.New("runtime_busy"), "", false, false},
		{"nil", nil, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := client.Code(tt.err); got != tt.code {
				t.Errorf("Code = %q, want %q", got, tt.code)
			}
			if got := client.IsCode(tt.err, "runtime_busy"); got != (tt.code == "runtime_busy") {
				t.Errorf("IsCode = %v", got)
			}
			if got := client.IsConflict(tt.err); got != tt.conflict {
				t.Errorf("IsConflict = %v", got)
			}
			if got := client.IsNotFound(tt.err); got != tt.notFound {
				t.Errorf("IsNotFound = %v", got)
			}
		})
	}
}
