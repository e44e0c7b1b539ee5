package server

import (
	"fmt"
	"net"

	"github.com/paddockhq/paddock/internal/config"
)

// doors are the server's listeners: the API's and the SSH gateway's (nil
// when it is off). They are bound before anything else, so that a start
// that cannot have its addresses fails before it creates anything.
type doors struct {
	api net.Listener
	ssh *sshServer
}

// openDoors binds the listeners.
func openDoors(cfg config.Config) (*doors, error) {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w%s", cfg.Listen, err, inUseHint(err, "listen / PADDOCK_LISTEN"))
	}
	sshd, err := listenSSH(cfg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	return &doors{api: ln, ssh: sshd}, nil
}

// close closes the listeners; the gateway's only if it never served (once
// it served, it closed its own as it stopped).
func (d *doors) close() {
	d.api.Close()
	d.ssh.close()
}
