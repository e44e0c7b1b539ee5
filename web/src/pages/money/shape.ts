// Usage by project and day, shaped for a stacked bar chart: one row per
// day of the range (days without usage included), one series per project
// (the largest seven; the rest together as "other projects").
import type { Schemas } from "../../api/client";
import { dayOf } from "./format";

type UsageItem = Schemas["UsageItem"];

export type Series = { key: string; name: string; color: string; total: number };
export type ChartData = { days: string[]; series: Series[]; values: number[][]; totals: number[] };

// Okabe and Ito's palette: told apart with the common colour-vision
// deficiencies too; "other" is grey.
const palette = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#8c6d00"];
const otherColor = "#6e7781";
const otherKey = "\u0000other";

// daysFrom lists n UTC days (YYYY-MM-DD) starting at from.
export function daysFrom(from: Date, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(new Date(from.getTime() + i * 86_400_000).toISOString().slice(0, 10));
  return out;
}

// shapeUsage turns the API's items (interval=day) into the chart's data.
export function shapeUsage(items: UsageItem[], days: string[]): ChartData {
  const totals = new Map<string, { name: string; total: number }>();
  for (const it of items) {
    const t = totals.get(it.key) ?? { name: it.name || it.key.slice(0, 8), total: 0 };
    t.total += it.net;
    totals.set(it.key, t);
  }
  const ranked = [...totals.entries()].sort((a, b) => b[1].total - a[1].total || a[1].name.localeCompare(b[1].name));
  const shown = ranked.slice(0, palette.length);
  const series: Series[] = shown.map(([key, t], i) => ({ key, name: t.name, color: palette[i], total: t.total }));
  const rest = ranked.slice(palette.length);
  if (rest.length > 0) {
    series.push({ key: otherKey, name: `${rest.length} other projects`, color: otherColor, total: rest.reduce((s, [, t]) => s + t.total, 0) });
  }
  const col = new Map(series.map((s, i) => [s.key, i]));
  const row = new Map(days.map((d, i) => [d, i]));
  const values = days.map(() => series.map(() => 0));
  for (const it of items) {
    const r = it.day ? row.get(dayOf(it.day)) : undefined;
    if (r === undefined) continue;
    const c = col.get(it.key) ?? col.get(otherKey);
    if (c !== undefined) values[r][c] += it.net;
  }
  return { days, series, values, totals: values.map((v) => v.reduce((s, x) => s + x, 0)) };
}

// niceCeil is the smallest 1, 2 or 5 times a power of ten at least v.
export function niceCeil(v: number): number {
  if (v <= 0) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}
