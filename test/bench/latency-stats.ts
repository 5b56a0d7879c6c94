// Small statistics for the benchmarks' reports: medians, percentiles and ranges of samples.

/** The median; NaN for no values. */
export function medianOf(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The nearest-rank percentile `q` (0..1); NaN for no values. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** "min-max" with two decimals. */
export function rangeOf(values: readonly number[]): string {
  return `${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)}`;
}
