// The installation's providers, their capabilities and their circuit
// breakers, read again every few seconds while the page is open.
import { api, must } from "../../api/client";
import { Empty, ErrorNote, Page, useAsync } from "../../ui";
import { usePoll } from "./common";

const breakerClass: Record<string, string> = {
  closed: "status-running",
  open: "status-error",
  "half-open": "status-paused",
  none: "status-idle",
};

export function Providers() {
  const list = useAsync(async () => must(await api.GET("/api/v1/providers")).items, []);
  usePoll(list.reload, 5000);
  return (
    <Page title="Providers">
      <ErrorNote error={list.error} />
      {list.data && list.data.length === 0 && <Empty>No providers.</Empty>}
      {list.data && list.data.length > 0 && (
        <div class="table-wrap">
          <table aria-label="Providers">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Circuit breaker</th>
                <th scope="col">Isolation</th>
                <th scope="col">Pause</th>
                <th scope="col">Snapshot</th>
                <th scope="col">Writable root</th>
                <th scope="col">Networks</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((p) => (
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
            </tbody>
          </table>
        </div>
      )}
      <p class="muted">
        An open breaker fails its provider's calls at once (503 <code>provider_circuit_open</code>) and closes by itself when the backend answers again.
      </p>
    </Page>
  );
}

const yes = (b: boolean) => (b ? "yes" : "no");
