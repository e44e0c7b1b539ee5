// The installation's providers, their capabilities and their circuit
// breakers, read again every few seconds while the page is open.
import { api, must } from "../../api/client";
import { Page, usePolled } from "../../ui";
import { Listed, Table } from "../../ui/table";

const breakerClass: Record<string, string> = {
  closed: "status-running",
  open: "status-error",
  "half-open": "status-paused",
  none: "status-idle",
};

export function Providers() {
  const list = usePolled(async () => must(await api.GET("/api/v1/providers")).items, 5000);
  return (
    <Page title="Providers">
      <Listed list={list} empty="No providers.">
        {(providers) => (
          <Table label="Providers" cols={["Name", "Circuit breaker", "Isolation", "Pause", "Snapshot", "Writable root", "Networks"]}>
            {providers.map((p) => (
              <tr data-provider={p.name} data-breaker={p.breaker.state}>
                <td>
                  {p.name} {p.default && <span class="badge">default</span>}
                </td>
                <td>
                  <span class={"status " + (breakerClass[p.breaker.state] ?? "")}>{p.breaker.state}</span>
                  {p.breaker.error && <div class="error inline">{p.breaker.error}</div>}
                </td>
                <td>{p.capabilities.isolation}</td>
                <td>{yes(p.capabilities.pause)}</td>
                <td>{yes(p.capabilities.snapshot)}</td>
                <td>{yes(p.capabilities.writable_root)}</td>
                <td>{p.capabilities.networks.join(", ")}</td>
              </tr>
            ))}
          </Table>
        )}
      </Listed>
      <p class="muted">
        An open breaker fails its provider's calls at once (503 <code>provider_circuit_open</code>) and closes by itself when the backend answers again.
      </p>
    </Page>
  );
}

const yes = (b: boolean) => (b ? "yes" : "no");
