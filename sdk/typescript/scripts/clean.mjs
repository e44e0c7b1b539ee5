// Removes the last build, so that a file no longer in src/ leaves no
// stale output behind.
import { rmSync } from "node:fs";

rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
