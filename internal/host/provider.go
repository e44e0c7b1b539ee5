package host

import (
	"context"
	"errors"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	sshprovider "github.com/paddockhq/paddock/internal/providers/ssh"
	"github.com/paddockhq/paddock/internal/store"
)

var errClosed = errors.New("the hosts service is closed")

// providerCloser is a machine's provider.
type providerCloser interface {
	provider.Provider
	Close() error
	Ping(ctx context.Context) error
}

// provider makes h's ssh provider, logging in with key. It does not dial.
func (s *Service) provider(h store.Host, key []byte) (providerCloser, error) {
	shim, err := s.cfg.Shim()
	if err != nil {
		return nil, errdefs.Unavailable(CodeUnavailable, "this server has no agent binary for machines: %s", err.Error()).WithCause(err)
	}
	return sshprovider.New(sshprovider.Config{
		Name:         h.ProviderName(),
		Address:      h.Address,
		User:         h.User,
		Key:          key,
		HostKey:      h.HostKey,
		DockerSocket: h.DockerSocket,
		RunDir:       h.RunDir,
		DiskDir:      h.DiskDir,
		Instance:     s.cfg.Instance,
		ShimPath:     shim,
		PullMissing:  s.cfg.PullImages,
		Mode:         string(h.Mode.OrDefault()),
	}, s.logger.With("provider", h.ProviderName(), "host", h.Name))
}

// check dials the machine and pings its engine (bare mode: prepares the
// agent there): the host key must be the pinned one and the key must log
// in, and a bare machine's account must be root (the provider's ssh_*
// codes, 422); a machine that cannot be reached, or whose engine does not
// answer, is 422 host_unreachable.
func check(ctx context.Context, p providerCloser, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	err := p.Ping(ctx)
	if err == nil {
		return nil
	}
	if e, ok := errdefs.Public(err); ok && errors.Is(err, errdefs.ErrFailedPrecondition) {
		return e
	}
	return errdefs.FailedPrecondition(CodeUnreachable, "the machine %s could not be reached, or it could not run sandboxes: %s",
		addr, errdefs.PublicMessage(err, err.Error())).WithCause(err)
}
