// The warm pools: each template's size and the warm sandboxes it holds
// now, read again every few seconds while the page is open.
import { api, must, type Schemas } from "../../api/client";
import { Empty, Page, Section, Time, usePolled } from "../../ui";
import { Listed, Table } from "../../ui/table";

type Pool = Schemas["WarmPoolStatus"]["pools"][number];

export function WarmPool() {
  const st = usePolled(async () => must(await api.GET("/api/v1/warm-pool")).pools, 5000);
  return (
    <Page title="Warm pool">
      <Listed list={st} empty="No warm pool is configured: every start is a cold start.">
        {(pools) => pools.map((p, i) => <PoolView pool={p} n={i + 1} />)}
      </Listed>
    </Page>
  );
}

// PoolView is one pool: its template, fill and sandboxes.
function PoolView({ pool, n }: { pool: Pool; n: number }) {
  const id = `pool-${n}-h`;
  return (
    <Section
      id={id}
      data-pool={pool.template}
      heading={
        <>
          {pool.image} on {pool.provider} {!pool.configured && <span class="badge">no longer configured</span>}
        </>
      }
    >
      <dl class="props">
        <dt>Ready</dt>
        <dd>
          <meter min={0} max={Math.max(pool.size, 1)} value={pool.ready} aria-label={`Ready of ${pool.size}`} /> {pool.ready} of {pool.size}
          {pool.creating > 0 && `, ${pool.creating} being made`}
        </dd>
        <dt>Kept</dt>
        <dd>{pool.running ? "running, agent link open" : "paused"}</dd>
        <dt>Resources</dt>
        <dd>
          {pool.cpu_millis ? `${pool.cpu_millis / 1000} CPU` : "default CPU"}, {pool.memory_mb ? `${pool.memory_mb} MB` : "default memory"}, network{" "}
          {pool.network || "default"}
        </dd>
        <dt>Template</dt>
        <dd>
          <code class="wrap">{pool.template}</code>
        </dd>
      </dl>
      {pool.sandboxes.length === 0 ? (
        <Empty>No warm sandboxes now.</Empty>
      ) : (
        <Table label={`Warm sandboxes of ${pool.image} on ${pool.provider}`} cols={["Sandbox", "State", "Provider id", "Made"]}>
          {pool.sandboxes.map((s) => (
          <tr data-warm={s.id} data-state={s.state}>
            <td>
              <code>{s.id}</code>
            </td>
            <td>
              <span class={"status " + (s.state === "ready" ? "status-running" : "status-starting")}>{s.state}</span>
            </td>
            <td>
              <code class="wrap">{s.provider_sandbox_id || "—"}</code>
            </td>
            <td>
              <Time at={s.created_at} />
            </td>
          </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}
