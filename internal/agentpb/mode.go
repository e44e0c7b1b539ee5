package agentpb

import "io/fs"

// The protocol carries permission bits as a uint32 from 0 to 07777:
// rwx for owner, group and others, and setuid (04000), setgid (02000) and
// sticky (01000). Both ends of the link convert with these.

// FileMode converts protocol permission bits to a Go mode.
func FileMode(bits uint32) fs.FileMode {
	mode := fs.FileMode(bits & 0o777)
	if bits&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if bits&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if bits&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// PermBits converts a Go mode's permissions (setuid, setgid and sticky
// included) to protocol permission bits.
func PermBits(mode fs.FileMode) uint32 {
	b := uint32(mode.Perm())
	if mode&fs.ModeSetuid != 0 {
		b |= 0o4000
	}
	if mode&fs.ModeSetgid != 0 {
		b |= 0o2000
	}
	if mode&fs.ModeSticky != 0 {
		b |= 0o1000
	}
	return b
}
