package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

// runtimeSettings are the runtime settings `project create` and `runtime
// set` share. create adds the ones fixed at creation (provider, disk).
type runtimeSettings struct {
	image, provider, network, cpu, memory, disk, rootfs, user string
	harness, model                                            string
	allow, deny, secrets, capabilities, ports                 []string
	pids                                                      int64
	idle, maxLifetime, archiveAfter                           time.Duration
}

func (s *runtimeSettings) register(cmd *cobra.Command, create bool) {
	f := cmd.Flags()
	f.StringVar(&s.image, "image", "", "runtime image")
	f.StringVar(&s.network, "network", "", "egress mode: none (loopback only), proxy (only through the egress proxy, which applies --allow and --deny) or open")
	f.StringSliceVar(&s.allow, "allow", nil, "egress rule to allow in proxy mode: a domain (*.pypi.org), host:port or a CIDR (repeatable)")
	f.StringSliceVar(&s.deny, "deny", nil, "egress rule to deny; deny wins over allow (repeatable)")
	f.StringSliceVar(&s.secrets, "secret", nil, "secret to bind, by name or id: injected into every sandbox the runtime starts (repeatable)")
	f.StringVar(&s.rootfs, "rootfs", "", "root filesystem: readonly (the default) or writable, where apt-get install works (changes survive pause and archive, not reset)")
	f.StringVar(&s.user, "user", "", "the account processes run as unless an exec names another: user (uid 1000, the default) or root")
	f.StringSliceVar(&s.capabilities, "capabilities", nil, "sidecar capabilities, such as computer_use,all_harness (see 'paddock capabilities -o json'; '' for none)")
	f.StringVar(&s.cpu, "cpu", "", "CPUs: 0.5, 2 or 500m")
	f.StringVar(&s.memory, "memory", "", "memory: 512 (MB), 512M or 2G")
	f.Int64Var(&s.pids, "pids-limit", 0, "maximum number of processes")
	f.DurationVar(&s.idle, "idle-timeout", 0, "pause the sandbox after this long without activity, e.g. 15m")
	f.DurationVar(&s.maxLifetime, "max-lifetime", 0, "pause the sandbox after this long running, whatever its activity (default: no bound)")
	f.DurationVar(&s.archiveAfter, "archive-after", 0, "archive the runtime after this long paused (default: the server's)")
	if create {
		f.StringVar(&s.provider, "provider", "", "sandbox provider (see 'paddock capabilities')")
		f.StringVar(&s.disk, "disk", "", "workspace disk quota: 512 (MB), 512M or 20G (default: the server's)")
		f.StringSliceVar(&s.ports, "port", nil, "a port the runtime declares, PORT or PORT:public (public once it listens); the sandbox sees its preview URL as PADDOCK_PREVIEW_URL_<PORT> (repeatable)")
	}
	f.StringVar(&s.harness, "harness", "", "the agent harness a prompt runs when it names none (see 'paddock capabilities'; default: the server's)")
	f.StringVar(&s.model, "model", "", "the model a prompt's harness is given when the prompt names none (default: the harness's)")
}

// patch returns the settings whose flags were given: --allow and --deny
// each replace one of the runtime's lists.
func (s *runtimeSettings) patch(cmd *cobra.Command) (client.RuntimePatch, error) {
	var p client.RuntimePatch
	changed := cmd.Flags().Changed
	if changed("image") {
		p.Image = &s.image
	}
	if changed("harness") {
		p.Harness = &s.harness
	}
	if changed("model") {
		p.Model = &s.model
	}
	if changed("cpu") {
		v, err := parseCPU(s.cpu)
		if err != nil {
			return p, err
		}
		p.CPUMillis = &v
	}
	if changed("memory") {
		v, err := parseMemory(s.memory)
		if err != nil {
			return p, err
		}
		p.MemoryMB = &v
	}
	if changed("pids-limit") {
		if s.pids <= 0 {
			return p, usagef("--pids-limit must be positive")
		}
		p.PidsLimit = &s.pids
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
		dst  **int64
	}{
		{"idle-timeout", s.idle, &p.IdleTimeoutSeconds},
		{"max-lifetime", s.maxLifetime, &p.MaxLifetimeSeconds},
		{"archive-after", s.archiveAfter, &p.ArchiveAfterSeconds},
	} {
		if changed(d.flag) {
			v, err := durationSeconds(d.flag, d.v, false)
			if err != nil {
				return p, err
			}
			*d.dst = &v
		}
	}
	if changed("network") || changed("allow") || changed("deny") {
		p.Network = &client.NetworkPatch{Mode: s.network}
		if changed("allow") {
			allow := rulesOf(s.allow)
			p.Network.Allow = &allow
		}
		if changed("deny") {
			deny := rulesOf(s.deny)
			p.Network.Deny = &deny
		}
	}
	if changed("secret") {
		p.Secrets = &s.secrets
	}
	if changed("rootfs") {
		p.RootFS = &s.rootfs
	}
	if changed("user") {
		p.User = &s.user
	}
	if changed("capabilities") {
		b, err := json.Marshal(rulesOf(s.capabilities))
		if err != nil {
			return p, err
		}
		p.CapabilitiesJSON = new(string(b))
	}
	return p, nil
}

// rulesOf is a list flag's rules without empty ones: --allow ” is the
// empty list.
func rulesOf(flag []string) []string {
	out := []string{}
	for _, r := range flag {
		if r != "" {
			out = append(out, r)
		}
	}
	return out
}

// config returns the settings of a new runtime; ok is false when no flag
// was given, so the server's defaults apply as a whole.
func (s *runtimeSettings) config(cmd *cobra.Command) (client.RuntimeConfig, bool, error) {
	p, err := s.patch(cmd)
	if err != nil {
		return client.RuntimeConfig{}, false, err
	}
	c := client.RuntimeConfig{Image: s.image, Provider: s.provider, Harness: s.harness, Model: s.model}
	if n := p.Network; n != nil {
		c.Network = &client.NetworkPolicy{Mode: n.Mode}
		if n.Allow != nil {
			c.Network.Allow = *n.Allow
		}
		if n.Deny != nil {
			c.Network.Deny = *n.Deny
		}
	}
	for _, v := range []struct {
		src *int64
		dst *int64
	}{
		{p.CPUMillis, &c.CPUMillis}, {p.MemoryMB, &c.MemoryMB}, {p.PidsLimit, &c.PidsLimit},
		{p.IdleTimeoutSeconds, &c.IdleTimeoutSeconds}, {p.MaxLifetimeSeconds, &c.MaxLifetimeSeconds},
		{p.ArchiveAfterSeconds, &c.ArchiveAfterSeconds},
	} {
		if v.src != nil {
			*v.dst = *v.src
		}
	}
	if p.Secrets != nil {
		c.Secrets = *p.Secrets
	}
	if p.RootFS != nil {
		c.RootFS = *p.RootFS
	}
	if p.User != nil {
		c.User = *p.User
	}
	if p.CapabilitiesJSON != nil {
		c.CapabilitiesJSON = *p.CapabilitiesJSON
	}
	if s.disk != "" {
		if c.DiskMB, err = parseSize("--disk", s.disk); err != nil {
			return c, false, err
		}
	}
	if c.Ports, err = declaredPorts(s.ports); err != nil {
		return c, false, err
	}
	return c, !reflect.ValueOf(c).IsZero(), nil
}

// declaredPorts reads --port: PORT or PORT:public each.
func declaredPorts(flags []string) ([]client.RuntimePort, error) {
	var out []client.RuntimePort
	for _, f := range flags {
		num, mode, hasMode := strings.Cut(f, ":")
		port, err := strconv.Atoi(num)
		if err != nil || port < 1 || port > 65535 || (hasMode && mode != "public") {
			return nil, usagef("--port %q: want PORT or PORT:public, PORT 1 to 65535", f)
		}
		out = append(out, client.RuntimePort{Port: port, Public: hasMode})
	}
	return out, nil
}

func (a *app) runtimeSetCmd(sc *scope) *cobra.Command {
	var s runtimeSettings
	cmd := &cobra.Command{
		Use:   "set RUNTIME",
		Short: "Change a runtime's settings",
		Long: `Change a runtime's settings; flags not given stay as they are. Egress rules
and timeouts apply at once; the image, resources and network mode apply when
the runtime next starts (the answer says which). --allow replaces the
runtime's allow list and --deny its deny list (--allow '' empties it); a list
not given stays. --secret replaces its bound secrets. ` + runtimeArg,
		Example: `  paddock runtime set agent --network proxy --allow pypi.org --allow '*.pythonhosted.org'
  paddock runtime set agent --deny evil.example.com
  paddock runtime set agent --secret openai --secret github`,
		Args: exactArgs("RUNTIME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := s.patch(cmd)
			if err != nil {
				return err
			}
			if reflect.ValueOf(p).IsZero() {
				return usagef("nothing to change: give at least one setting (see --help)")
			}
			var update client.RuntimeUpdate
			err = a.runtimeCall(cmd, sc, args[0], func(ctx context.Context, t target) (client.Runtime, error) {
				update, err = t.c.ConfigureRuntime(ctx, t.org, t.ws, t.rid, p)
				return update.Runtime, err
			})
			if err != nil || a.output == outputJSON {
				return err
			}
			if len(update.Live) > 0 {
				fmt.Fprintf(a.env.Stderr, "applied now: %s\n", strings.Join(update.Live, ", "))
			}
			if len(update.NextStart) > 0 {
				fmt.Fprintf(a.env.Stderr, "applied at the next start: %s\n", strings.Join(update.NextStart, ", "))
			}
			return nil
		},
	}
	s.register(cmd, false)
	return cmd
}
