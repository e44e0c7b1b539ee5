package agentpb

// Exec's framed path. ProcessService.Exec carries a call on an HTTP/2
// stream: its headers, its messages in Connect envelopes and its trailers
// pass through the stream's flow control and the transport's goroutines
// on both sides, which for a short command costs more than the command.
// The framed path carries the same messages on a connection of its own,
// kept from call to call, in the byte path's frames (WriteFrame):
//
//  1. The client sends an HTTP/1.1 request for ExecFramesPath with
//     "Connection: Upgrade" and "Upgrade: " ExecFramesUpgrade; the agent
//     answers 101 Switching Protocols, with ExecFramesEnvHeader set to
//     "set" once it has been given an environment (SetEnv) since it
//     started. An agent without the path answers 404, and the client uses
//     ProcessService.Exec.
//  2. A call: the client sends ExecRequest messages (protobuf), one a
//     frame, the first a start of a process without stdin or a terminal
//     (those go by Exec), then signals or resizes, then one empty frame,
//     which ends the request side as CloseRequest ends Exec's. It sends the
//     empty frame once in every call, at the latest when the agent's last
//     frame came, and starts the next call only after that. The agent
//     queues ExecFramesQueued frames of a call at the most (beyond them
//     it reads on once the call took one). It refuses a first frame that
//     is no message, or a start with stdin or a terminal, as a failed
//     call, and closes the connection of a client that breaks these rules
//     within a call (stdin, a frame that is no message, a start before
//     the call's end).
//  3. The agent answers frames whose first byte is their kind: ExecFrameEvent
//     then an ExecResponse (protobuf), as Exec's stream carries them, and
//     last ExecFrameEnd, alone, or ExecFrameFailed then a FrameError (JSON)
//     when the call failed as Exec would have failed.
//  4. Once both sides' last frames have passed, the connection carries the
//     next call. A connection that ends within a call ends the call as a
//     cancelled Exec does: the agent kills a foreground process.
const (
	ExecFramesPath      = "/paddock.agent.v1.ProcessService/ExecFrames"
	ExecFramesUpgrade   = "paddock-exec-frames"
	ExecFramesEnvHeader = "Paddock-Env"
)

// The first byte of the agent's frames on the framed exec path.
const (
	ExecFrameEvent  byte = 0
	ExecFrameEnd    byte = 1
	ExecFrameFailed byte = 2
)

// ExecFrameMax bounds one frame of the framed exec path either way: one
// message, as Exec's messages are bounded.
const ExecFrameMax = 4 << 20

// ExecFramesQueued is how many frames of a call the agent holds for it,
// read ahead so that the connection's end is seen at once: a framed call's
// process has no stdin, so its client sends only signals and resizes.
const ExecFramesQueued = 64
