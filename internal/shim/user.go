package shim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A sandbox's processes run as one of two accounts, named as E2B names
// them: "user" (uid and gid 1000, home /home/user), the default, and
// "root". The agent itself runs as root with only CAP_SETUID, CAP_SETGID
// and CAP_KILL beyond what the sandbox grants root (none, or what a
// writable root needs): enough to start a process as either and to signal
// it. A process started as user has no capabilities; one started as root
// has the sandbox's root's, never the agent's three (see dropAgentCaps).
// An agent that is not root (a Kubernetes Pod's, uid 1000 with no
// capabilities) runs everything as its own account and refuses a call
// that names another (see agentUser).
type sandboxUser struct {
	name     string
	uid, gid int
	home     string
}

// Names of the sandbox's accounts.
const (
	UserDefault = "user"
	UserRoot    = "root"
)

var sandboxUsers = map[string]sandboxUser{
	UserDefault: {name: UserDefault, uid: 1000, gid: 1000, home: "/home/user"},
	UserRoot:    {name: UserRoot, uid: 0, gid: 0, home: "/root"},
}

// lookupUser returns the account called name; "" means fallback, and an
// empty fallback the agent's own identity (see ownAccount).
func lookupUser(name, fallback string) (sandboxUser, error) {
	if name == "" {
		name = fallback
	}
	if name == "" {
		return ownAccount(os.Geteuid(), os.Getegid(), sandboxUsers), nil
	}
	u, ok := sandboxUsers[name]
	if !ok {
		return sandboxUser{}, errInvalid("invalid_user", "user %q does not exist in the sandbox: use %q or %q", name, UserDefault, UserRoot)
	}
	return u, nil
}

// ownAccount is the agent's own identity, uid and gid. An agent that is
// not root runs everything as itself (a Kubernetes Pod runs it as uid
// 1000, with no capabilities): when its ids are those of an account in
// accounts other than root and that account's home is a directory, it is
// that account, with its name and home, so that processes get HOME, USER
// and a working directory as they would had they named it. Otherwise
// (root outside a sandbox, as in tests, or a developer's own account) it
// has no name and no home, and processes inherit the agent's.
func ownAccount(uid, gid int, accounts map[string]sandboxUser) sandboxUser {
	if uid != 0 {
		for _, u := range accounts {
			if u.uid != uid || u.gid != gid {
				continue
			}
			if st, err := os.Stat(u.home); err == nil && st.IsDir() {
				return u
			}
		}
	}
	return sandboxUser{uid: uid, gid: gid}
}

// agentUser is lookupUser for what the agent does for a call: an account
// other than its own is refused when the agent cannot become it (it runs
// without CAP_SETUID and CAP_SETGID, as a Pod's non-root agent does), with
// a stable reason rather than the kernel's EPERM halfway through.
func agentUser(name, fallback string) (sandboxUser, error) {
	u, err := lookupUser(name, fallback)
	if err != nil {
		return sandboxUser{}, err
	}
	if err := mayBecome(u); err != nil {
		return sandboxUser{}, err
	}
	return u, nil
}

// mayBecome refuses u, with the reason user_not_permitted, when the agent
// cannot act as it.
func mayBecome(u sandboxUser) error {
	if u.isAgent() || canSwitchUsers() {
		return nil
	}
	own := lookupOwnName()
	return errPermission("user_not_permitted", u.name,
		"user %q is not available in this sandbox: its agent runs as uid %d without the privilege to switch users, so everything runs as %s",
		u.name, os.Geteuid(), own)
}

// lookupOwnName names the agent's own account for a message.
func lookupOwnName() string {
	if u := ownAccount(os.Geteuid(), os.Getegid(), sandboxUsers); u.name != "" {
		return fmt.Sprintf("%q (name no user, or %q)", u.name, u.name)
	}
	return "the agent's own account (name no user)"
}

// canSwitchUsers reports whether the agent may act as another account:
// whether it holds CAP_SETUID and CAP_SETGID. It is read once, on a
// thread of the agent's that never dropped them (a variable for tests).
var canSwitchUsers = sync.OnceValue(func() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	has := func(c uint) bool { return data[c/32].Effective&(1<<(c%32)) != 0 }
	return has(unix.CAP_SETUID) && has(unix.CAP_SETGID)
})

// isAgent reports whether u is the agent's own identity, so that acting as
// u needs no switch.
func (u sandboxUser) isAgent() bool { return u.uid == os.Geteuid() && u.gid == os.Getegid() }

// asUser runs fn with u's file-system identity: its uid and gid, no
// supplementary groups. What fn creates is u's and what it may touch is
// what u may. The thread's real and saved ids stay the agent's: the kernel
// decides who may signal a thread or change its limits (kill, tgkill,
// prlimit) by those, so were they u's, u's processes could stop the agent
// through that thread for as long as it lives. It needs only the agent's
// CAP_SETUID and CAP_SETGID on one thread (setgroups as a raw syscall
// changes only the calling thread).
func asUser(u sandboxUser, fn func() error) error {
	if u.isAgent() {
		return fn()
	}
	return onThread(func() error { return setFileIDs(u) }, restoreThread, fn)
}

// setFileIDs gives the calling thread u's file-system ids: setfsuid and
// setfsgid, which change nothing else; where the kernel lacks them
// (gVisor), the effective ids, which also leaves the real and saved ones
// alone.
func setFileIDs(u sandboxUser) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETGROUPS, 0, 0, 0); e != 0 {
		return e
	}
	if !haveFileIDs() {
		return setEffectiveIDs(u)
	}
	syscall.RawSyscall(syscall.SYS_SETFSGID, uintptr(u.gid), 0, 0)
	syscall.RawSyscall(syscall.SYS_SETFSUID, uintptr(u.uid), 0, 0)
	// Neither reports a refusal, only the previous id: asking again with
	// an invalid id (-1) reads the current one.
	gid, _, _ := syscall.RawSyscall(syscall.SYS_SETFSGID, ^uintptr(0), 0, 0)
	uid, _, _ := syscall.RawSyscall(syscall.SYS_SETFSUID, ^uintptr(0), 0, 0)
	if int(uint32(gid)) != u.gid || int(uint32(uid)) != u.uid {
		return syscall.EPERM
	}
	return nil
}

// haveFileIDs reports whether the kernel has setfsuid and setfsgid
// (gVisor's has not): asking for an invalid id (-1) changes nothing.
var haveFileIDs = sync.OnceValue(func() bool {
	_, _, e := syscall.RawSyscall(syscall.SYS_SETFSGID, ^uintptr(0), 0, 0)
	return e != syscall.ENOSYS
})

// setAllIDs makes u's uid and gid the calling thread's real, effective and
// saved ones.
func setAllIDs(u sandboxUser) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETGROUPS, 0, 0, 0); e != 0 {
		return e
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESGID, uintptr(u.gid), uintptr(u.gid), uintptr(u.gid)); e != 0 {
		return e
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, uintptr(u.uid), uintptr(u.uid), uintptr(u.uid)); e != 0 {
		return e
	}
	return nil
}

// setEffectiveIDs makes u's uid and gid the calling thread's effective
// ones (and so its file-system ones), the gid first, while the thread
// still has CAP_SETGID.
func setEffectiveIDs(u sandboxUser) error {
	if err := setEffectiveID(syscall.SYS_SETRESGID, u.gid); err != nil {
		return err
	}
	return setEffectiveID(syscall.SYS_SETRESUID, u.uid)
}

// setEffectiveID sets the calling thread's effective uid or gid (call
// SYS_SETRESUID or SYS_SETRESGID) to id, and leaves the real and saved
// ones alone.
func setEffectiveID(call uintptr, id int) error {
	keep := ^uintptr(0) // -1: unchanged
	if _, _, e := syscall.RawSyscall(call, keep, uintptr(id), keep); e != 0 {
		return e
	}
	return nil
}

// agentOnlyCaps are the capabilities the agent holds only to start
// processes as another user and to signal them.
var agentOnlyCaps = []uintptr{unix.CAP_SETUID, unix.CAP_SETGID, unix.CAP_KILL}

// dropAgentCaps removes agentOnlyCaps from the calling thread's effective,
// permitted and inheritable sets; a process forked on that thread starts
// without them, and no-new-privileges (set on the thread too, as the
// sandbox sets it on the agent) keeps its exec as root from regaining
// them.
func dropAgentCaps() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	for _, c := range agentOnlyCaps {
		bit := uint32(1) << (c % 32)
		d := &data[c/32]
		d.Effective &^= bit
		d.Permitted &^= bit
		d.Inheritable &^= bit
	}
	return unix.Capset(&hdr, &data[0])
}

// asProcessOwner runs fn, which reads or writes a file under /proc/pid;
// when the agent may not (another user's process: the kernel lets only
// its owner, or a holder of CAP_SYS_PTRACE or CAP_DAC_OVERRIDE, which the
// agent lacks), it runs fn again as the process's owner (see asUser).
// look says fn looks into the process (its fds, its environment), which
// gVisor, unlike Linux, checks with the real ids too: there the thread
// takes all three for the span of fn, in which the owner's processes could
// signal it.
func asProcessOwner(pid int, look bool, fn func() error) error {
	err := fn()
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	st, serr := os.Stat("/proc/" + strconv.Itoa(pid))
	if serr != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return err
	}
	owner := sandboxUser{uid: int(sys.Uid), gid: int(sys.Gid)}
	if owner.isAgent() || !canSwitchUsers() {
		return err
	}
	if look && !haveFileIDs() {
		// Real and saved ids do not come back: the thread is thrown away.
		return onThread(func() error { return setAllIDs(owner) }, nil, fn)
	}
	return asUser(owner, fn)
}
