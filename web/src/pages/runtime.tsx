// A runtime's page: its header with status and actions, and a tab for
// each side of it; a tab loads what it shows only when it is shown.
import type { ComponentChildren } from "preact";
import { navigate } from "../router";
import { useScope } from "../session";
import { ErrorNote, Page, TabPanel, Tabs, type Tab } from "../ui";
import { nameOf, RuntimeActions, runtimeURL, Status, type Runtime } from "./runtime/common";
import { useRuntime } from "./runtime/useRuntime";
import { Overview } from "./runtime/overview";
import { ConfigTab } from "./runtime/config";
import { NetworkTab } from "./runtime/network";
import { SecretsTab } from "./runtime/secrets";
import { CapabilitiesTab } from "./runtime/capabilities";
import { ProcessesTab } from "./runtime/processes";
import { PortsTab } from "./runtime/ports";
import { SessionsTab } from "./runtime/sessions";
import { SandboxesTab } from "./runtime/sandboxes";
import { Terminal } from "./terminal";
import { Files } from "./files";

const tabs: Tab[] = [
  { id: "overview", label: "Overview" },
  { id: "config", label: "Config" },
  { id: "network", label: "Network" },
  { id: "secrets", label: "Secrets" },
  { id: "capabilities", label: "Capabilities" },
  { id: "processes", label: "Processes" },
  { id: "ports", label: "Ports" },
  { id: "sessions", label: "Sessions" },
  { id: "sandboxes", label: "Sandboxes" },
  { id: "terminal", label: "Terminal" },
  { id: "files", label: "Files" },
];

// RuntimePage is one runtime's page at one tab; an unknown tab shows the overview.
export function RuntimePage({ id, tab }: { id: string; tab: string }) {
  const { org, ws } = useScope();
  const { rt, put, deleted, error } = useRuntime(org, ws, id);
  const current = tabs.some((t) => t.id === tab) ? tab : "overview";
  if (deleted) {
    return (
      <Page title="Runtime deleted">
        <p>This runtime's project was deleted.</p>
      </Page>
    );
  }
  if (!rt) {
    return (
      <Page title="Runtime">
        {error ? <ErrorNote error={error} /> : <p aria-live="polite">Loading…</p>}
      </Page>
    );
  }
  return (
    <Page
      title={nameOf(rt)}
      actions={
        <>
          <Status status={rt.status} />
          <RuntimeActions rt={rt} onChanged={put} />
        </>
      }
    >
      {rt.status_reason && <p class="muted">{rt.status_reason}</p>}
      <Tabs label="Runtime" tabs={tabs} current={current} onSelect={(t) => navigate(runtimeURL(org, ws, id, t), true)} />
      <TabPanel id={current}>{panel(current, rt, put)}</TabPanel>
    </Page>
  );
}

// panel is what the tab shows; only the shown tab is rendered, so only
// it loads.
function panel(tab: string, rt: Runtime, put: (rt: Runtime) => void): ComponentChildren {
  switch (tab) {
    case "config":
      return <ConfigTab rt={rt} onChanged={put} />;
    case "network":
      return <NetworkTab rt={rt} />;
    case "secrets":
      return <SecretsTab rt={rt} />;
    case "capabilities":
      return <CapabilitiesTab rt={rt} />;
    case "processes":
      return <ProcessesTab rt={rt} />;
    case "ports":
      return <PortsTab rt={rt} />;
    case "sessions":
      return <SessionsTab rt={rt} />;
    case "sandboxes":
      return <SandboxesTab rt={rt} />;
    case "terminal":
      return <Terminal runtime={rt.id} />;
    case "files":
      return <Files runtime={rt.id} />;
    default:
      return <Overview rt={rt} />;
  }
}
