package agentpb

// AgentThreads is how many OS threads the sandbox agent makes as it
// starts, and keeps. The Go runtime cannot survive a thread the kernel
// refuses, and a sandbox's processes may fill its pids limit: were the
// agent to make a thread then, the sandbox would end with it. So it makes
// them first, while the sandbox is empty, and reuses them; it needs more
// only when it does more at once than this many threads carry. A provider
// whose pids limit counts the agent's threads adds AgentThreads to the
// limit, so that the processes get the whole of theirs.
const AgentThreads = 32
