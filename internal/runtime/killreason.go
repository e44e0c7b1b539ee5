package runtime

// Kill reasons recorded on ledger rows. Every reason the code writes is one
// of these constants, KillReasons lists them, and api/openapi.yaml
// (Sandbox.kill_reason) and docs/ARCHITECTURE.md list them all:
// TestKillReasonsDocumented holds the three together.
const (
	KillDeleted         = "deleted"          // the row's compute was killed (sandbox kill, runtime delete)
	KillReset           = "reset"            // the runtime was reset to idle
	KillProvisionFailed = "provision_failed" // its start failed
	KillProjectDeleted  = "project_deleted"  // its project was deleted
	KillVanished        = "vanished"         // the compute disappeared under the ledger
	KillArchived        = "archived"         // the runtime was archived: files saved, compute released
	KillInterrupted     = "interrupted"      // the server stopped in the middle of a start
	KillExited          = "exited"           // the compute stopped by itself
	KillFinished        = "finished"         // its task ran to the end
	KillTimedOut        = "timed_out"        // its task's time limit passed
)

// KillReasons is every kill reason a ledger row can carry.
var KillReasons = []string{
	KillDeleted, KillReset, KillProvisionFailed, KillProjectDeleted,
	KillVanished, KillArchived, KillInterrupted, KillExited, KillFinished, KillTimedOut,
}
