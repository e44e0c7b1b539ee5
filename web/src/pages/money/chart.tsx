// A stacked bar chart of usage per day, drawn as inline SVG: one bar per
// day, one colour per project, with axes, a legend, and a title and
// description a screen reader reads (the numbers are in a table beside).
import type { ChartData } from "./shape";
import { niceCeil } from "./shape";
import { shortCredits } from "./format";

const W = 720;
const H = 280;
const M = { l: 64, r: 12, t: 12, b: 48 };

// UsageChart draws data; summary is its accessible description.
export function UsageChart({ data, summary }: { data: ChartData; summary: string }) {
  const plotW = W - M.l - M.r;
  const plotH = H - M.t - M.b;
  const top = niceCeil(Math.max(0, ...data.totals));
  const y = (v: number) => M.t + plotH - (Math.max(0, v) / top) * plotH;
  const step = plotW / Math.max(1, data.days.length);
  const every = Math.ceil(data.days.length / 10);
  return (
    <figure class="usage-figure">
      <svg class="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="usage-chart-title usage-chart-desc">
        <title id="usage-chart-title">Usage by project and day</title>
        <desc id="usage-chart-desc">{summary}</desc>
        <YAxis top={top} y={y} />
        {data.days.map((d, i) => (
          <DayBar data={data} i={i} x={M.l + i * step + step * 0.15} w={Math.max(1, step * 0.7)} y={y} label={i % every === 0 ? d.slice(5) : ""} cx={M.l + i * step + step / 2} />
        ))}
        <line x1={M.l} x2={W - M.r} y1={M.t + plotH} y2={M.t + plotH} stroke="#57606a" />
        <text x={M.l + plotW / 2} y={H - 6} text-anchor="middle" class="axis-title">
          Day (UTC)
        </text>
        <text transform={`translate(14 ${M.t + plotH / 2}) rotate(-90)`} text-anchor="middle" class="axis-title">
          Credits
        </text>
      </svg>
      <Legend data={data} />
    </figure>
  );
}

// YAxis is the credits scale: five ticks with their grid lines.
function YAxis({ top, y }: { top: number; y: (v: number) => number }) {
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * top);
  return (
    <g aria-hidden="true">
      {ticks.map((t) => (
        <g>
          <line x1={M.l} x2={W - M.r} y1={y(t)} y2={y(t)} stroke="#d0d7de" />
          <text x={M.l - 6} y={y(t) + 4} text-anchor="end" class="tick">
            {shortCredits(t)}
          </text>
        </g>
      ))}
    </g>
  );
}

// DayBar is one day's stack, each part titled with its project and amount.
function DayBar(props: { data: ChartData; i: number; x: number; w: number; y: (v: number) => number; label: string; cx: number }) {
  const { data, i, x, w, y, label, cx } = props;
  let base = 0;
  const day = data.days[i];
  return (
    <g data-day={day}>
      {data.series.map((s, j) => {
        const v = Math.max(0, data.values[i][j]);
        if (v === 0) return null;
        const y0 = y(base);
        base += v;
        const y1 = y(base);
        return (
          <rect x={x} y={y1} width={w} height={Math.max(0.5, y0 - y1)} fill={s.color} data-project={s.name}>
            <title>{`${day}, ${s.name}: ${shortCredits(data.values[i][j])} credits`}</title>
          </rect>
        );
      })}
      {label && (
        <text x={cx} y={H - M.b + 16} text-anchor="middle" class="tick" aria-hidden="true">
          {label}
        </text>
      )}
    </g>
  );
}

// Legend names each colour's project and its total over the range.
function Legend({ data }: { data: ChartData }) {
  return (
    <figcaption>
      <ul class="legend" aria-label="Projects">
        {data.series.map((s) => (
          <li>
            <svg class="swatch" width="12" height="12" aria-hidden="true">
              <rect width="12" height="12" fill={s.color} />
            </svg>
            {s.name}: {shortCredits(s.total)} credits
          </li>
        ))}
      </ul>
    </figcaption>
  );
}
