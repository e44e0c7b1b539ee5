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

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/sshgw"
	"github.com/paddockhq/paddock/internal/store"
)

// sshServer is the SSH gateway's part in the server's life: its listener
// is bound at step 0 with the API's (a busy port, the default one
// included, fails the start before anything is created), its host key loaded (made on first start), and it serves once the
// API does. A nil *sshServer is a gateway that is off; its methods do
// nothing.
type sshServer struct {
	ln   net.Listener
	info *sshgw.Info
	gw   *sshgw.Gateway
	cfg  sshgw.Config
	done chan struct{} // closed when Serve returns
}

// listenSSH binds the gateway's listener and loads its host key.
func listenSSH(cfg config.Config, logger *slog.Logger) (*sshServer, error) {
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

// Info is what the API tells clients about the gateway; nil when it is off.
func (s *sshServer) Info() *sshgw.Info {
	if s == nil {
		return nil
	}
	return s.info
}

// start serves the gateway on its listener.
func (s *sshServer) start(st store.Store, runtimes *runtime.Service, logger *slog.Logger, out io.Writer) {
	if s == nil {
		return
	}
	cfg := s.cfg
	cfg.Store, cfg.Runtimes, cfg.Logger = st, runtimes, logger
	s.gw = sshgw.New(cfg)
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
// by themselves before it ends them. It returns a function that waits for
// all of it.
func (s *sshServer) shutdown(grace time.Duration) (wait func()) {
	if s == nil || s.gw == nil {
		return func() {}
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		_ = s.gw.Shutdown(ctx)
	}()
	return func() {
		<-stopped
		<-s.done
	}
}

// close closes a listener that never served (a start that failed).
func (s *sshServer) close() {
	if s != nil && s.gw == nil {
		s.ln.Close()
	}
}
