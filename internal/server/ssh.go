package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/sshgw"
)

// sshServer is the SSH gateway's part in the server's life: its listener
// is one of the doors, bound with the API's before anything is created (a
// busy port, the default one included, fails the start), its host key
// loaded (made on first start); its component gives it the store and the
// runtimes, and it serves once the API does. A nil *sshServer is a
// gateway that is off; its methods do nothing.
type sshServer struct {
	ln     net.Listener
	info   *sshgw.Info
	gw     *sshgw.Gateway
	cfg    sshgw.Config
	logger *slog.Logger
	done   chan struct{} // closed when Serve returns
}

// sshComponent is the SSH gateway: it mounts GET /api/v1/ssh when it is
// on. It serves once started, and its Close, after the API has drained
// (the HTTP component closes first) and before the runtimes and the
// store close, gives open sessions the agent streams' grace to end.
func (w *wiring) sshComponent() component.Registration {
	return component.Def[*sshServer]{
		Name:     sshName,
		Requires: []string{storeName, accessName, runtimeName},
		Init: func(_ context.Context, ic *component.InitContext) (*sshServer, error) {
			s := w.doors.ssh
			if s == nil {
				return nil, nil // off
			}
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			acc, err := component.Get[*accessPart](ic, accessName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			s.cfg.Runtimes, s.cfg.Access = rp.svc, acc.svc
			s.cfg.Logger, s.logger = in.logger, in.logger
			if in.limits != nil {
				s.cfg.Users = in.limits
			}
			w.mount(api.SSH(s.info))
			return s, nil
		},
		Start: func(_ context.Context, s *sshServer) error {
			s.start(w.out)
			return nil
		},
		Close: func(ctx context.Context, s *sshServer) error {
			grace := AgentStreamGrace
			if w.o.Manual {
				grace = 0
			}
			s.shutdown(ctx, grace)
			return nil
		},
	}.Registration()
}

// listenSSH binds the gateway's listener and loads its host key.
func listenSSH(cfg config.Config) (*sshServer, error) {
	addr := cfg.SSHListen
	switch addr {
	case "off":
		return nil, nil
	case "":
		addr = config.DefaultSSHListen
	}
	key, err := sshgw.LoadHostKey(filepath.Join(cfg.DataDir, sshgw.HostKeyFile))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("ssh gateway: listen on %s: %w%s", addr, err, inUseHint(err, `ssh_listen / PADDOCK_SSH_LISTEN to another address, or "off"`))
	}
	public := cfg.SSHAddress
	if public == "" {
		public = ln.Addr().String()
		if host, port, err := net.SplitHostPort(public); err == nil {
			if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
				public = net.JoinHostPort("", port) // the API's host (sshgw.Info)
			}
		}
	}
	return &sshServer{ln: ln, info: sshgw.NewInfo(public, key.PublicKey()), cfg: sshgw.Config{HostKey: key}}, nil
}

// start serves the gateway on its listener.
func (s *sshServer) start(out io.Writer) {
	if s == nil {
		return
	}
	logger := s.logger
	s.gw = sshgw.New(s.cfg)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.gw.Serve(s.ln); !errors.Is(err, sshgw.ErrClosed) {
			logger.Error("ssh gateway stopped serving", "err", err)
		}
	}()
	fmt.Fprintf(out, "paddock ssh gateway on %s (host key %s)\n", s.ln.Addr(), s.info.Fingerprint)
	logger.Info("ssh gateway serving", "addr", s.ln.Addr().String(), "host_key", s.info.Fingerprint)
}

// shutdown stops taking connections and gives open sessions grace to end
// by themselves, within ctx's deadline, before it ends them; it returns
// once they have ended and the gateway stopped serving.
func (s *sshServer) shutdown(ctx context.Context, grace time.Duration) {
	if s == nil || s.gw == nil {
		return // off, or it never served: the doors close its listener
	}
	ctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	_ = s.gw.Shutdown(ctx)
	<-s.done
}

// close closes a listener that never served (a start that failed).
func (s *sshServer) close() {
	if s != nil && s.gw == nil {
		s.ln.Close()
	}
}
