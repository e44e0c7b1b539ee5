// How the console writes amounts of credits and days.

// credits writes an amount to at most six decimals (the ledger's
// precision), with the reader's digit grouping.
export function credits(n: number): string {
  return n.toLocaleString(undefined, { maximumFractionDigits: 6 });
}

// shortCredits writes an amount for an axis or a legend: three
// significant digits at most.
export function shortCredits(n: number): string {
  return n.toLocaleString(undefined, { maximumSignificantDigits: 3 });
}

// dayOf is the UTC day (YYYY-MM-DD) of an RFC 3339 time.
export function dayOf(at: string): string {
  return new Date(at).toISOString().slice(0, 10);
}
