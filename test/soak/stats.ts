// Numbers for the soak report: percentiles and the least-squares slope of a memory trend.

/** The nearest-rank percentile `q` (0..1) of `values`; NaN for none. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export interface Sample {
  /** Milliseconds since the start. */
  t: number;
  value: number;
}

/** The least-squares slope of `samples`, per minute; NaN for fewer than two. */
export function slopePerMinute(samples: readonly Sample[]): number {
  const n = samples.length;
  if (n < 2) return NaN;
  const mt = samples.reduce((s, p) => s + p.t, 0) / n;
  const mv = samples.reduce((s, p) => s + p.value, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of samples) {
    num += (p.t - mt) * (p.value - mv);
    den += (p.t - mt) ** 2;
  }
  return den === 0 ? NaN : (num / den) * 60_000;
}

/**
 * The slope per minute of the lowest sample in each of `windows` equal spans of time: the floor
 * RSS returns to after each garbage collection. A leak raises the floor; a GC sawtooth whose period
 * is minutes long does not, though it can tilt a plain regression either way.
 */
export function floorSlopePerMinute(samples: readonly Sample[], windows = 6): number {
  if (samples.length < 2) return NaN;
  const start = samples[0]!.t;
  const span = (samples.at(-1)!.t - start) / windows || 1;
  const lows = new Map<number, Sample>();
  for (const s of samples) {
    const w = Math.min(windows - 1, Math.floor((s.t - start) / span));
    const low = lows.get(w);
    if (!low || s.value < low.value) lows.set(w, s);
  }
  return slopePerMinute([...lows.values()].sort((a, b) => a.t - b.t));
}
