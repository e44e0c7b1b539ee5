package agentconn_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/agentpb/agentpbconnect"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestMalformedRequests speaks the protocol directly, as another client
// could, and checks that malformed calls get clear Connect errors.
func TestMalformedRequests(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return testenv.UnixDialer(a.socket)(ctx)
	}}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	proc := agentpbconnect.NewProcessServiceClient(hc, "http://agent")
	files := agentpbconnect.NewFileServiceClient(hc, "http://agent")
	term := agentpbconnect.NewTerminalServiceClient(hc, "http://agent")

	reason := func(err error) (connect.Code, string) {
		var ce *connect.Error
		if !errors.As(err, &ce) {
			return connect.CodeUnknown, err.Error()
		}
		for _, d := range ce.Details() {
			if v, err := d.Value(); err == nil {
				if info, ok := v.(*agentpb.ErrorInfo); ok {
					return ce.Code(), info.Reason
				}
			}
		}
		return ce.Code(), ""
	}
	bidiExec := func(msgs ...*agentpb.ExecRequest) error {
		s := proc.Exec(ctx)
		for _, m := range msgs {
			_ = s.Send(m)
		}
		_ = s.CloseRequest()
		defer s.CloseResponse()
		for {
			if _, err := s.Receive(); err != nil {
				return err
			}
		}
	}
	start := &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Start{Start: &agentpb.ProcessStart{Argv: []string{"sleep", "1000"}}}}
	tests := []struct {
		name   string
		err    error
		code   connect.Code
		reason string
	}{
		{"exec without messages", bidiExec(), connect.CodeInvalidArgument, "missing_start"},
		{"exec starting with stdin", bidiExec(&agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Stdin{Stdin: []byte("x")}}), connect.CodeInvalidArgument, "missing_start"},
		{"exec with two starts", bidiExec(start, start), connect.CodeInvalidArgument, "duplicate_start"},
		{"exec with a bad signal", bidiExec(start, &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Signal{Signal: agentpb.Signal(77)}}), connect.CodeInvalidArgument, "invalid_signal"},
		{"exec resizing no terminal", bidiExec(start, &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Resize{}}), connect.CodeFailedPrecondition, "not_a_terminal"},
		{"terminal without start", func() error {
			s := term.Open(ctx)
			_ = s.Send(&agentpb.TerminalRequest{Msg: &agentpb.TerminalRequest_Input{Input: []byte("x")}})
			_ = s.CloseRequest()
			defer s.CloseResponse()
			_, err := s.Receive()
			return err
		}(), connect.CodeInvalidArgument, "missing_start"},
		{"signal unspecified", func() error {
			_, err := proc.Signal(ctx, connect.NewRequest(&agentpb.SignalRequest{Id: "p-1"}))
			return err
		}(), connect.CodeInvalidArgument, "invalid_signal"},
		{"input naming nothing", func() error {
			_, err := proc.Input(ctx).CloseAndReceive()
			return err
		}(), connect.CodeInvalidArgument, "missing_process"},
		{"write without header", func() error {
			s := files.Write(ctx)
			_ = s.Send(&agentpb.WriteRequest{Msg: &agentpb.WriteRequest_Data{Data: []byte("x")}})
			_, err := s.CloseAndReceive()
			return err
		}(), connect.CodeInvalidArgument, "missing_header"},
		{"write with two headers", func() error {
			s := files.Write(ctx)
			h := &agentpb.WriteRequest{Msg: &agentpb.WriteRequest_Header{Header: &agentpb.WriteHeader{Path: t.TempDir() + "/f"}}}
			_ = s.Send(h)
			_ = s.Send(h)
			_, err := s.CloseAndReceive()
			return err
		}(), connect.CodeInvalidArgument, "duplicate_header"},
		{"write with a bad mode", func() error {
			s := files.Write(ctx)
			_ = s.Send(&agentpb.WriteRequest{Msg: &agentpb.WriteRequest_Header{Header: &agentpb.WriteHeader{Path: "/tmp/f", Mode: 0o170000}}})
			_, err := s.CloseAndReceive()
			return err
		}(), connect.CodeInvalidArgument, "invalid_mode"},
		{"upload without header", func() error {
			_, err := files.UploadTar(ctx).CloseAndReceive()
			return err
		}(), connect.CodeInvalidArgument, "missing_header"},
		{"read negative offset", func() error {
			s, err := files.Read(ctx, connect.NewRequest(&agentpb.ReadRequest{Path: "/etc/hostname", Offset: -5}))
			if err != nil {
				return err
			}
			defer s.Close()
			for s.Receive() {
			}
			return s.Err()
		}(), connect.CodeInvalidArgument, "invalid_range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, r := reason(tt.err)
			if code != tt.code || r != tt.reason {
				t.Fatalf("got %v (%s, %q), want %s %q", tt.err, code, r, tt.code, tt.reason)
			}
		})
	}
}
