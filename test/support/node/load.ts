// Steady traffic through kube-apiserver while a test disturbs vgate (a rolling upgrade, a killed
// pod): each stream sends one request at a time, back to back with a short pause, and counts the
// answers that are what a healthy vgate gives and the ones that are not, keeping the first few
// failures' texts for the assertion message.

import type { KubeTestClient } from "../kube/kube-client.js";

export interface LoadStream {
  name: string;
  client: KubeTestClient;
  /** The next request (called before each one, so bodies and clients may vary). */
  request(i: number): {
    method: string;
    path: string;
    body?: unknown;
    client?: KubeTestClient;
    /** More request headers (a bearer token per request, on one connection). */
    headers?: Record<string, string>;
  };
  /** Whether an answer is what a healthy vgate gives. */
  ok(status: number, body: unknown): boolean;
}

export interface StreamCount {
  ok: number;
  failed: number;
  /** The first failures: time since start, status and a short body. */
  failures: string[];
  /** When each failed request was sent and when its answer (or error) came, in ms since start. */
  failedAt: { sent: number; answered: number }[];
}

export interface RunningLoad {
  /** Date.now() when the load started: the origin of the times in the counts. */
  startedAt: number;
  /** Counts so far. */
  counts(): Record<string, StreamCount>;
  /** Stops every stream after its request in flight and returns the counts. */
  stop(): Promise<Record<string, StreamCount>>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function startLoad(streams: readonly LoadStream[], pauseMs = 20): RunningLoad {
  const start = Date.now();
  let running = true;
  const counts: Record<string, StreamCount> = {};
  const loops = streams.map(async (s) => {
    const c: StreamCount = { ok: 0, failed: 0, failures: [], failedAt: [] };
    counts[s.name] = c;
    for (let i = 0; running; i++) {
      const r = s.request(i);
      const sentAt = Date.now() - start;
      let status = 0;
      let body: unknown;
      try {
        const res = await (r.client ?? s.client).request(r.method, r.path, r.body, r.headers);
        status = res.status;
        body = res.body;
      } catch (err) {
        body = (err as Error).message;
      }
      if (s.ok(status, body)) c.ok++;
      else {
        c.failed++;
        c.failedAt.push({ sent: sentAt, answered: Date.now() - start });
        if (c.failures.length < 10) {
          // A Status's message says what failed (a webhook call's error ends it).
          const message = (body as { kind?: unknown; message?: unknown } | undefined)?.message;
          const text =
            typeof body === "string"
              ? body
              : typeof message === "string"
                ? message
                : JSON.stringify(body);
          c.failures.push(`+${Date.now() - start} ms: ${status} ${text.slice(-300)}`);
        }
      }
      await sleep(pauseMs);
    }
  });
  return {
    startedAt: start,
    counts: () => counts,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return counts;
    },
  };
}
