package secrets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Error codes of bad secrets and references.
const (
	CodeNotFound     = "secret_not_found"
	CodeInvalidName  = "invalid_secret_name"
	CodeInvalidEnv   = "invalid_secret_env"
	CodeInvalidValue = "invalid_secret_value"
	CodeInvalidHosts = "invalid_secret_hosts"
	CodeEnvConflict  = "secret_env_conflict"
)

// Limits.
const (
	MaxValueBytes = 64 << 10
	MaxHosts      = 32
)

var (
	nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)
	envRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// reservedEnv are variables paddock sets itself in a sandbox: the proxy's
// and the trust store's.
var reservedEnv = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "PIP_CERT", "NODE_EXTRA_CA_CERTS",
	"PATH", "HOME",
}

// Service keeps secrets: sealed in the store, written and listed through
// the API, resolved for runtimes, and opened only for a sandbox's agent and
// the egress proxy.
type Service struct {
	st     Store
	keys   *Keyring
	now    func() time.Time
	logger *slog.Logger
}

// Store is what the service uses of the store: it reads and deletes
// secrets, and writes them in a transaction.
type Store interface {
	store.Transactor
	GetSecret(ctx context.Context, id string) (store.Secret, error)
	GetSecretByName(ctx context.Context, orgID, workspaceID, name string) (store.Secret, error)
	ListSecrets(ctx context.Context, orgID, workspaceID string, page store.Page) ([]store.Secret, string, error)
	DeleteSecret(ctx context.Context, id string) error
}

// New returns a Service.
func New(st Store, keys *Keyring, logger *slog.Logger) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{st: st, keys: keys, now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }, logger: logger}
}

// Spec is what a caller writes of a secret. On a replace, nil fields stay
// as they are (but Value is required on create).
type Spec struct {
	Name     string
	Env      string
	Value    *string
	Brokered *bool
	Hosts    *[]string
}

// DefaultEnv is the variable a secret is injected as unless it says: its
// name in upper case, with - and . as _.
func DefaultEnv(name string) string {
	return strings.NewReplacer("-", "_", ".", "_").Replace(strings.ToUpper(name))
}

func checkName(name string) error {
	if !nameRE.MatchString(name) {
		return errdefs.InvalidArgument(CodeInvalidName, "secret name %q is not valid: 1 to 64 letters, digits, _ . -, starting with a letter", name)
	}
	if _, err := uuid.Parse(name); err == nil {
		return errdefs.InvalidArgument(CodeInvalidName, "secret name %q looks like an id; choose another", name)
	}
	return nil
}

func checkEnv(env string) error {
	if !envRE.MatchString(env) {
		return errdefs.InvalidArgument(CodeInvalidEnv, "environment variable %q is not valid: letters, digits and _, not starting with a digit", env)
	}
	up := strings.ToUpper(env)
	if strings.HasPrefix(up, "PADDOCK_") || slices.Contains(reservedEnv, up) {
		return errdefs.InvalidArgument(CodeInvalidEnv, "environment variable %q is set by paddock itself; choose another", env)
	}
	return nil
}

// check validates a whole secret and its value. It never quotes the value.
func check(s store.Secret, value string) error {
	if err := checkName(s.Name); err != nil {
		return err
	}
	if err := checkEnv(s.Env); err != nil {
		return err
	}
	switch {
	case value == "":
		return errdefs.InvalidArgument(CodeInvalidValue, "a secret's value must not be empty")
	case len(value) > MaxValueBytes:
		return errdefs.InvalidArgument(CodeInvalidValue, "a secret's value is at most %d bytes (this one is %d)", MaxValueBytes, len(value))
	case strings.ContainsRune(value, 0):
		return errdefs.InvalidArgument(CodeInvalidValue, "a secret's value must not hold a NUL byte: it becomes an environment variable")
	case s.Brokered && strings.ContainsAny(value, "\r\n"):
		return errdefs.InvalidArgument(CodeInvalidValue, "a brokered secret's value goes into request headers and must not hold a line break")
	}
	if !s.Brokered {
		if len(s.Hosts) > 0 {
			return errdefs.InvalidArgument(CodeInvalidHosts, "hosts apply to brokered secrets only; set brokered, or leave hosts out")
		}
		return nil
	}
	if len(s.Hosts) == 0 || len(s.Hosts) > MaxHosts {
		return errdefs.InvalidArgument(CodeInvalidHosts, "a brokered secret needs 1 to %d hosts it may be sent to", MaxHosts)
	}
	for i, h := range s.Hosts {
		d, ok := egress.DomainPattern(h)
		if !ok || d == "*" {
			return errdefs.InvalidArgument(CodeInvalidHosts, "host %q is not a domain or a wildcard domain (api.example.com, *.example.com)", h)
		}
		s.Hosts[i] = d
	}
	return nil
}

// Create makes a secret of an org (workspaceID "") or of a workspace.
func (s *Service) Create(ctx context.Context, orgID, workspaceID string, spec Spec) (store.Secret, error) {
	now := s.now()
	sec := store.Secret{ID: uuid.NewString(), OrgID: orgID, WorkspaceID: workspaceID, Name: spec.Name, Env: spec.Env, CreatedAt: now, UpdatedAt: now}
	if sec.Env == "" {
		sec.Env = DefaultEnv(spec.Name)
	}
	if spec.Brokered != nil {
		sec.Brokered = *spec.Brokered
	}
	if spec.Hosts != nil {
		sec.Hosts = slices.Clone(*spec.Hosts)
	}
	if spec.Value == nil {
		return store.Secret{}, errdefs.InvalidArgument(CodeInvalidValue, "a secret needs a value")
	}
	if err := check(sec, *spec.Value); err != nil {
		return store.Secret{}, err
	}
	err := s.st.InTx(ctx, func(q store.Queries) error {
		if err := s.keys.Seal(&sec, []byte(*spec.Value)); err != nil {
			return err
		}
		return q.CreateSecret(ctx, sec)
	})
	if errors.Is(err, errdefs.ErrConflict) {
		return store.Secret{}, errdefs.Conflict("secret_exists", "a secret named %q already exists here; replace it with PUT", sec.Name)
	}
	if err != nil {
		return store.Secret{}, err
	}
	return s.st.GetSecret(ctx, sec.ID)
}

// Replace changes a secret: its value, variable, brokering or hosts. The
// value is kept unless spec gives one.
func (s *Service) Replace(ctx context.Context, sec store.Secret, spec Spec) (store.Secret, error) {
	var out store.Secret
	err := s.st.InTx(ctx, func(q store.Queries) error {
		cur, err := q.GetSecret(ctx, sec.ID)
		if err != nil {
			return err
		}
		if spec.Env != "" {
			cur.Env = spec.Env
		}
		if spec.Brokered != nil {
			cur.Brokered = *spec.Brokered
			if !cur.Brokered && spec.Hosts == nil {
				cur.Hosts = nil
			}
		}
		if spec.Hosts != nil {
			cur.Hosts = slices.Clone(*spec.Hosts)
		}
		var value []byte
		if spec.Value != nil {
			value = []byte(*spec.Value)
		} else if value, err = s.keys.Open(cur); err != nil {
			return err
		}
		if err := check(cur, string(value)); err != nil {
			return err
		}
		if err := s.keys.Seal(&cur, value); err != nil {
			return err
		}
		cur.UpdatedAt = s.now()
		out, err = q.UpdateSecret(ctx, cur)
		return err
	})
	return out, err
}

// Delete removes a secret. Sandboxes running with it keep what their
// agent was given until they stop; new ones do not get it.
func (s *Service) Delete(ctx context.Context, sec store.Secret) error {
	return s.st.DeleteSecret(ctx, sec.ID)
}

// List lists one scope's secrets.
func (s *Service) List(ctx context.Context, orgID, workspaceID string, page store.Page) ([]store.Secret, string, error) {
	return s.st.ListSecrets(ctx, orgID, workspaceID, page)
}

// Get finds a secret in exactly one scope, by id or name.
func (s *Service) Get(ctx context.Context, orgID, workspaceID, ref string) (store.Secret, error) {
	var sec store.Secret
	var err error
	if _, perr := uuid.Parse(ref); perr == nil {
		sec, err = s.st.GetSecret(ctx, ref)
		if err == nil && (sec.OrgID != orgID || sec.WorkspaceID != workspaceID) {
			err = errdefs.NotFound(CodeNotFound, "not here")
		}
	} else {
		sec, err = s.st.GetSecretByName(ctx, orgID, workspaceID, ref)
	}
	if errdefs.IsNotFound(err) {
		return store.Secret{}, errdefs.NotFound(CodeNotFound, "secret %q not found", ref)
	}
	return sec, err
}

// Resolve finds the secrets refs name for a runtime of workspaceID: an id,
// or a name looked up in the workspace first and then in the org. Each is
// found once; an unknown one is 404 secret_not_found, and two injected as
// the same variable are 400 secret_env_conflict.
func (s *Service) Resolve(ctx context.Context, orgID, workspaceID string, refs []string) ([]store.Secret, error) {
	var out []store.Secret
	envs := map[string]string{}
	for _, ref := range refs {
		sec, err := s.Get(ctx, orgID, workspaceID, ref)
		if errdefs.IsNotFound(err) {
			sec, err = s.Get(ctx, orgID, "", ref)
		}
		if errdefs.IsNotFound(err) {
			return nil, errdefs.NotFound(CodeNotFound, "secret %q not found in the runtime's workspace or its org (paddock secret ls)", ref)
		}
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(o store.Secret) bool { return o.ID == sec.ID }) {
			continue
		}
		if other, ok := envs[sec.Env]; ok {
			return nil, errdefs.InvalidArgument(CodeEnvConflict, "secrets %q and %q are both injected as %s", other, sec.Name, sec.Env)
		}
		envs[sec.Env] = sec.Name
		out = append(out, sec)
	}
	return out, nil
}

// OrgValue opens org orgID's own secret name (not a workspace's) for a
// use of the server's: a snapshot bucket's credentials. A missing one is
// 404 secret_not_found; a brokered one is refused, as its value never
// leaves the egress proxy.
func (s *Service) OrgValue(ctx context.Context, orgID, name string) (string, error) {
	sec, err := s.Get(ctx, orgID, "", name)
	if err != nil {
		return "", err
	}
	if sec.Brokered {
		return "", errdefs.FailedPrecondition("secret_brokered", "secret %q is brokered: its value is only sent by the egress proxy", name)
	}
	v, err := s.keys.Open(sec)
	return string(v), err
}

// Env is what the agent of sb injects for its secrets: each value as its
// variable, or for a brokered secret the placeholder the proxy swaps (its
// value is not even opened). A secret deleted since sb started is left out.
func (s *Service) Env(ctx context.Context, sb store.Sandbox) (map[string]string, error) {
	env := map[string]string{}
	err := s.each(ctx, sb.OrgID, sb.SecretIDs, func(sec store.Secret) bool {
		if sec.Brokered {
			env[sec.Env] = egress.Placeholder(sec.ID)
		}
		return !sec.Brokered
	}, func(sec store.Secret, value []byte) {
		env[sec.Env] = string(value)
	})
	return env, err
}

// Brokers are the brokered secrets among secretIDs (a sandbox's) that may
// be sent to host, for the egress proxy; only those are opened.
func (s *Service) Brokers(ctx context.Context, orgID string, secretIDs []string, host string) ([]egress.Brokered, error) {
	var out []egress.Brokered
	err := s.each(ctx, orgID, secretIDs, func(sec store.Secret) bool {
		return sec.Brokered && slices.ContainsFunc(sec.Hosts, func(h string) bool { return egress.MatchDomain(h, host) })
	}, func(sec store.Secret, value []byte) {
		out = append(out, egress.Brokered{SecretID: sec.ID, Name: sec.Name, Placeholder: egress.Placeholder(sec.ID), Value: string(value), Hosts: sec.Hosts})
	})
	return out, err
}

// each opens the secrets of ids (which must be orgID's) that want accepts
// and hands each to fn with its value.
func (s *Service) each(ctx context.Context, orgID string, ids []string, want func(store.Secret) bool, fn func(store.Secret, []byte)) error {
	for _, id := range ids {
		sec, err := s.st.GetSecret(ctx, id)
		if errdefs.IsNotFound(err) {
			s.logger.Warn("a secret was deleted since its sandbox started; it is left out", "secret", id)
			continue
		}
		if err != nil {
			return err
		}
		if sec.OrgID != orgID {
			return fmt.Errorf("secret %s does not belong to the sandbox's org", id)
		}
		if !want(sec) {
			continue
		}
		value, err := s.keys.Open(sec)
		if err != nil {
			return err
		}
		fn(sec, value)
	}
	return nil
}

// Keyring is the keyring the service seals with; other sealed values of
// the installation (a registered machine's key) use it too.
func (s *Service) Keyring() *Keyring { return s.keys }
