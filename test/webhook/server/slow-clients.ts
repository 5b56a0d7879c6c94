// Hundreds of hostile clients against one port, run as its own process by slow-clients.test.ts (so
// that their TLS work does not slow the test's own good requests): `node slow-clients.js PORT
// SECONDS`. Each client keeps one connection open the way its kind misbehaves; when the server
// closes it, the client notes how long it lived and connects again at once, until SECONDS are over
// (so refusing a client quickly only brings it back: the server must also bear the churn). Then it
// prints one JSON report: per kind, how many connections the server closed, how long the longest
// lived, and the status codes it answered with.

import { connect as tcpConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";

/** How each kind misbehaves, and how many of it there are. */
export const ATTACKERS = {
  /** Headers a byte at a time, never finished (slowloris). */
  slowHeaders: 80,
  /** A 3 MiB Content-Length, then 4 KiB every 250 ms: a big body, slowly. */
  slowBody: 80,
  /** A 3 MiB body sent at once but for its last byte, then nothing. */
  stalledBody: 40,
  /** A chunked body of 64 KiB pieces every 100 ms, never ended. */
  chunkedBody: 40,
  /** TLS connected, then silent. */
  idleTls: 40,
  /** TCP connected, no TLS handshake. */
  idleTcp: 20,
} as const;

export type AttackerKind = keyof typeof ATTACKERS;

export interface KindReport {
  /** Connections the server closed. */
  closed: number;
  /** Milliseconds the longest-lived of them lived. */
  longestMs: number;
  /** Connections still open when the attack ended, and the longest time any of them had lived. */
  open: number;
  openLongestMs: number;
  /** Status codes of the answers seen, with counts. */
  statuses: Record<string, number>;
}

const MIB3 = 3 * 1024 * 1024;
const HEAD =
  "POST /validate/ownedaccesskeys HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n";

function behave(kind: AttackerKind, socket: Socket): () => void {
  let timer: NodeJS.Timeout | undefined;
  const every = (ms: number, f: () => void) => (timer = setInterval(f, ms));
  switch (kind) {
    case "slowHeaders": {
      const head = `${HEAD}X-Padding: `;
      let i = 0;
      every(200, () => socket.write(i < head.length ? head[i++]! : "a"));
      break;
    }
    case "slowBody": {
      socket.write(`${HEAD}Content-Length: ${MIB3}\r\n\r\n{"pad":"`);
      const piece = Buffer.alloc(4096, 0x61);
      every(250, () => socket.write(piece));
      break;
    }
    case "stalledBody":
      socket.write(`${HEAD}Content-Length: ${MIB3}\r\n\r\n`);
      socket.write(Buffer.alloc(MIB3 - 1, 0x20));
      break;
    case "chunkedBody": {
      socket.write(`${HEAD}Transfer-Encoding: chunked\r\n\r\n`);
      const piece = Buffer.alloc(64 * 1024, 0x20);
      every(100, () =>
        socket.write(Buffer.concat([Buffer.from("10000\r\n"), piece, Buffer.from("\r\n")])),
      );
      break;
    }
    default:
  }
  return () => clearInterval(timer);
}

async function attack(
  port: number,
  seconds: number,
  pauseMs: number,
): Promise<Record<AttackerKind, KindReport>> {
  const end = Date.now() + seconds * 1000;
  const report = {} as Record<AttackerKind, KindReport>;
  const open = new Set<{ kind: AttackerKind; since: number; socket: Socket }>();
  const start = (kind: AttackerKind): void => {
    if (Date.now() >= end) return;
    const since = Date.now();
    const socket: Socket =
      kind === "idleTcp"
        ? tcpConnect({ host: "127.0.0.1", port })
        : tlsConnect({ host: "127.0.0.1", port, rejectUnauthorized: false });
    const entry = { kind, since, socket };
    open.add(entry);
    let stop: () => void = () => undefined;
    socket.once(
      kind === "idleTcp" ? "connect" : "secureConnect",
      () => (stop = behave(kind, socket)),
    );
    socket.on("data", (d: Buffer) => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(String(d))?.[1];
      if (status) report[kind].statuses[status] = (report[kind].statuses[status] ?? 0) + 1;
    });
    socket.on("error", () => undefined);
    socket.once("close", () => {
      stop();
      if (!open.delete(entry)) return;
      const r = report[kind];
      r.closed++;
      r.longestMs = Math.max(r.longestMs, Date.now() - since);
      setTimeout(() => start(kind), pauseMs);
    });
  };
  for (const [kind, count] of Object.entries(ATTACKERS) as [AttackerKind, number][]) {
    report[kind] = { closed: 0, longestMs: 0, open: 0, openLongestMs: 0, statuses: {} };
    for (let i = 0; i < count; i++) start(kind);
  }
  await new Promise((r) => setTimeout(r, Math.max(0, end - Date.now())));
  for (const entry of [...open]) {
    open.delete(entry);
    const r = report[entry.kind];
    r.open++;
    r.openLongestMs = Math.max(r.openLongestMs, Date.now() - entry.since);
    entry.socket.destroy();
  }
  return report;
}

if (process.argv[1]?.endsWith("slow-clients.js")) {
  const [port, seconds, pauseMs = 0] = process.argv.slice(2).map(Number);
  void attack(port!, seconds!, pauseMs).then((report) => {
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.exit(0);
  });
}
