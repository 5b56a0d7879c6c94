// RFC 3339 timestamps as Kubernetes writes them (metav1.Time: creationTimestamp,
// deletionTimestamp, status.lastActivity), read as Go's time.Parse(time.RFC3339) reads them.

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** Days in a month (1-12): day 0 of the next month is the last day of this one. */
function daysIn(year: number, month: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
}

/**
 * Milliseconds since the epoch for an RFC 3339 timestamp as Go's time.Parse(time.RFC3339) accepts
 * it (fractional seconds allowed, no leap second, no 24:00), or null when it is not one.
 */
export function parseRfc3339(value: string): number | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0] = m.slice(1, 7).map(Number);
  const [sign, oh, om] = [m[8], Number(m[9] ?? 0), Number(m[10] ?? 0)];
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo)) return null;
  if (h > 23 || mi > 59 || s > 59 || oh > 23 || om > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  // Milliseconds from the first three fraction digits (Go keeps nanoseconds; we compare in ms).
  const ms = Number((m[7] ?? ".").slice(1, 4).padEnd(3, "0"));
  date.setUTCHours(h, mi, s, ms);
  const offset = (oh * 60 + om) * 60_000 * (sign === "-" ? -1 : 1);
  return date.getTime() - offset;
}
