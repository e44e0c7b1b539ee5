// The API's wire types, by the names the Go SDK gives them: aliases of
// the schemas generated from api/openapi.yaml into schema.ts (npm run
// gen), never written by hand.

import type { components, operations } from "./schema.js";

type S = components["schemas"];
type QueryOf<K extends keyof operations> = NonNullable<operations[K]["parameters"]["query"]>;

export type Org = S["Org"];
export type CreateOrgRequest = S["CreateOrgRequest"];
export type Workspace = S["Workspace"];
export type CreateWorkspaceRequest = S["CreateWorkspaceRequest"];
export type Project = S["Project"];
export type CreateProjectRequest = S["CreateProjectRequest"];
export type Template = S["Template"];
export type TemplateBuild = S["TemplateBuild"];
export type TemplateBuildEvent = S["TemplateBuildEvent"];
export type World = S["World"];
export type WorldMember = S["WorldMember"];
export type CreateWorldRequest = S["CreateWorldRequest"];
export type WorldMemberRequest = S["WorldMemberRequest"];
export type CreateTemplateRequest = S["CreateTemplateRequest"];
export type RuntimeConfig = S["RuntimeConfig"];
export type RuntimePort = S["RuntimePort"];
export type Runtime = S["Runtime"];
export type RuntimePatch = S["RuntimePatch"];
export type RuntimeUpdate = S["RuntimeUpdate"];
export type StartRuntimeRequest = S["StartRuntimeRequest"];
export type ResetRequest = S["ResetRequest"];
export type KeepaliveRequest = S["KeepaliveRequest"];
export type ExecRequest = S["ExecRequest"];
export type ExecResult = S["ExecResult"];
export type ExecEvent = S["ExecEvent"];
export type ExitStatus = S["ExitStatus"];
export type Process = S["Process"];
export type SignalRequest = S["SignalRequest"];
export type KillAllResult = S["KillAllResult"];
export type StdinResult = S["StdinResult"];
export type FileInfo = S["FileInfo"];
export type FileList = S["FileList"];
export type MkdirRequest = S["MkdirRequest"];
export type RenameRequest = S["RenameRequest"];
export type TarResult = S["TarResult"];
export type TerminalMessage = S["TerminalMessage"];
export type PromptRequest = S["PromptRequest"];
export type PromptResult = S["PromptResult"];
export type SessionEvent = S["SessionEvent"];
export type Session = S["Session"];
export type SessionTranscript = S["SessionTranscript"];
export type TurnDone = S["TurnDone"];
export type CreditAccount = S["CreditAccount"];
export type CreditEntry = S["CreditEntry"];
export type Usage = S["Usage"];
export type APIKey = S["APIKey"];
export type CreatedKey = S["CreatedKey"];
export type CreateKeyRequest = S["CreateKeyRequest"];
export type Me = S["Me"];
export type APIError = S["Error"];
// Instance mode.
export type RuntimeSecrets = S["RuntimeSecrets"];
export type RuntimeSSH = S["RuntimeSSH"];
export type Port = S["Port"];
export type Host = S["Host"];
export type AddHostRequest = S["AddHostRequest"];

/** One page of a listing; nextCursor is "" (or absent) on the last page. */
export interface Page<T> {
  items: T[];
  next_cursor?: string;
}

/** Paging of a listing: a previous page's next_cursor, and a page size. */
export interface ListOptions {
  cursor?: string;
  limit?: number;
}

export type JournalFilter = QueryOf<"listCreditJournal">;
export type UsageQuery = QueryOf<"getUsage">;
export type AttachOptions = QueryOf<"attachProcess">;
export type ListFilesOptions = Omit<QueryOf<"listFiles">, "path">;
export type WriteFileOptions = Omit<QueryOf<"writeFile">, "path">;
export type ReadFileOptions = Omit<QueryOf<"readFile">, "path">;
export type TerminalOptions = QueryOf<"terminal">;

// Snapshots and tasks.
export type Snapshot = S["Snapshot"];
export type CreateSnapshotRequest = S["CreateSnapshotRequest"];
export type RestoreSnapshotRequest = S["RestoreSnapshotRequest"];
export type RestoreSnapshotResult = S["RestoreSnapshotResult"];
export type CreateTasksRequest = S["CreateTasksRequest"];
export type Task = S["Task"];
export type TaskBatch = S["TaskBatch"];
export type TaskListOptions = QueryOf<"listTasks">;
// Workflows.
export type CreateWorkflowRequest = S["CreateWorkflowRequest"];
export type WorkflowStep = S["WorkflowStep"];
export type WorkflowStepState = S["WorkflowStepState"];
export type WorkflowRun = S["WorkflowRun"];
export type Workflow = S["Workflow"];
export type WorkflowEvent = S["WorkflowEvent"];
