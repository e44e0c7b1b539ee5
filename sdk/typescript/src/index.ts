// @paddockhq/sdk: the TypeScript SDK of paddock, for Node.js and browsers.
//
//   import { Paddock } from "@paddockhq/sdk";
//   const p = new Paddock({ url: "http://127.0.0.1:8080", apiKey: "pdk_…" });
//   const r = await p.exec("acme", "research", runtimeId, ["echo", "hello"]);
//   console.log(r.stdout);

export { Paddock, type BuildTemplateOptions, type ExecInput, type ExecOutput, type PaddockOptions, type StreamOptions, type UploadBody } from "./client.js";
export { PaddockError } from "./errors.js";
export { ExecStream, type ProcessEvent, type ProcessOutput, type StreamName } from "./exec.js";
export { PromptStream, SESSION_ID_HEADER } from "./sessions.js";
export { Terminal, type WebSocketConstructor, type WebSocketLike } from "./terminal.js";
export type { Fetch } from "./transport.js";
export type * from "./types.js";
export type { components, operations, paths } from "./schema.js";
