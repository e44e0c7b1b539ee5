// Package harnesstest holds what the tests of the harnesses share.
package harnesstest

// ResumeID is the id of a conversation that does not exist that the
// outputs captured from the real CLIs resumed (testdata/CAPTURED.md).
const ResumeID = "0d9e8f7a-6b5c-4d3e-8f1a-0b9c8d7e6f5a"

// UnknownResumeID is ResumeID as the harness named spells its
// conversation ids: OpenCode's are ses_…, Kimi Code's session_….
func UnknownResumeID(harness string) string {
	switch harness {
	case "opencode":
		return "ses_0000000000000000000000000a"
	case "kimi":
		return "session_" + ResumeID
	}
	return ResumeID
}
