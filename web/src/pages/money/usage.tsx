// Usage over time: what the org's compute cost per project and UTC day
// over a chosen range, as a chart and, for screen readers and exact
// numbers, as a table.
import { api, must } from "../../api/client";
import { navigate, useLocation } from "../../router";
import { ErrorNote, Section, useAsync } from "../../ui";
import { SelectField, value } from "../../ui/form";
import { Table } from "../../ui/table";
import { UsageChart } from "./chart";
import { credits, shortCredits } from "./format";
import { daysFrom, shapeUsage, type ChartData } from "./shape";

const ranges = [7, 14, 30, 90];

// Usage reads GET …/usage?group_by=project&interval=day for the range in
// the URL (?days=, default 14).
export function Usage({ org, tick }: { org: string; tick: number }) {
  const { path, query } = useLocation();
  const n = ranges.includes(Number(query.get("days"))) ? Number(query.get("days")) : 14;
  const today = new Date();
  const from = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - (n - 1)));
  const fromISO = from.toISOString();
  const usage = useAsync(
    async () => must(await api.GET("/api/v1/org/{org}/usage", { params: { path: { org }, query: { group_by: "project", interval: "day", from: fromISO } } })),
    [org, fromISO, tick],
  );
  const pick = (e: Event) => {
    const q = new URLSearchParams(location.search);
    q.set("days", value(e));
    navigate(path + "?" + q.toString(), true);
  };
  const data = usage.data ? shapeUsage(usage.data.items, daysFrom(from, n)) : null;
  return (
    <Section id="usage-head" heading="Usage by project and day">
      <SelectField label="Range" id="usage-range" narrow value={String(n)} onChange={pick}>
        {ranges.map((r) => (
          <option value={String(r)}>Last {r} days</option>
        ))}
      </SelectField>
      <ErrorNote error={usage.error} />
      {data && usage.data && (
        <>
          <p>
            Total over the range: <strong>{credits(usage.data.total.net)}</strong> credits
            {usage.data.total.shortfall > 0 && <span class="error"> ({credits(usage.data.total.shortfall)} ran unpaid)</span>}
          </p>
          {data.series.length > 0 ? <UsageChart data={data} summary={summarize(data)} /> : <p class="muted">No compute was charged in the range.</p>}
          <UsageTable data={data} />
        </>
      )}
    </Section>
  );
}

// summarize says in a sentence what the chart shows.
export function summarize(d: ChartData): string {
  const total = d.totals.reduce((s, x) => s + x, 0);
  const busiest = d.totals.reduce((b, v, i) => (v > d.totals[b] ? i : b), 0);
  const top = d.series[0];
  return (
    `Stacked bars, one per day from ${d.days[0]} to ${d.days[d.days.length - 1]}: ${shortCredits(total)} credits in all` +
    (top ? `; the most by ${top.name} (${shortCredits(top.total)}); the busiest day ${d.days[busiest]} (${shortCredits(d.totals[busiest])}).` : ".")
  );
}

// UsageTable is the chart's numbers, one row per day, collapsed by default.
function UsageTable({ data }: { data: ChartData }) {
  return (
    <details class="usage-table">
      <summary>Usage as a table</summary>
      <Table label="Usage by project and day" cols={["Day (UTC)", ...data.series.map((s) => s.name), "Total"]}>
        {data.days.map((d, i) => (
          <tr data-day={d}>
            <th scope="row" class="rowhead">
              {d}
            </th>
            {data.values[i].map((v) => (
              <td class="num">{credits(v)}</td>
            ))}
            <td class="num">{credits(data.totals[i])}</td>
          </tr>
        ))}
      </Table>
    </details>
  );
}
