// Just enough of the Prometheus text format to read a counter, or a histogram's _sum and _count,
// from a /metrics page (kube-apiserver's or vgate's), summed over the series whose labels match.
// For the benchmarks and the cluster tier.

export interface SumAndCount {
  sum: number;
  count: number;
}

const LINE = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

function labelsOf(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const m of (text ?? "").matchAll(LABEL)) labels[m[1]!] = m[2]!;
  return labels;
}

/** The value of `name` summed over the series whose labels include every pair in `match`. */
export function metricValue(page: string, name: string, match: Record<string, string>): number {
  let total = 0;
  for (const line of page.split("\n")) {
    const m = LINE.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = labelsOf(m[2]);
    if (Object.entries(match).every(([k, v]) => labels[k] === v)) total += Number(m[3]);
  }
  return total;
}

/** A histogram's `_sum` and `_count`, summed over the matching series. */
export function histogram(page: string, name: string, match: Record<string, string>): SumAndCount {
  return {
    sum: metricValue(page, `${name}_sum`, match),
    count: metricValue(page, `${name}_count`, match),
  };
}

/** Mean of the observations between two readings of one histogram, in ms; NaN when none. */
export function meanMsBetween(before: SumAndCount, after: SumAndCount): number {
  const count = after.count - before.count;
  return count > 0 ? ((after.sum - before.sum) / count) * 1000 : NaN;
}
