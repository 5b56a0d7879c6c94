// A real `vgate serve --dev` process, as users run it (webhook/bin/vgate, with its heap flags), for
// tests that must see the server from outside: its RSS, its log, whether it stays up. And a raw
// TLS client that writes exactly the bytes a test wants, as slowly as it wants.

import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { connect, type TLSSocket } from "node:tls";
import { repoRoot } from "../../support/fixtures.js";

export const VGATE_BIN = resolve(repoRoot, "webhook/bin/vgate");

export interface DevServe {
  child: ChildProcess;
  url: string;
  port: number;
  /** stdout so far: vgate's log, one JSON record a line. */
  logLines(): string[];
  /** Resident memory now and at its peak (VmRSS, VmHWM), in MB. */
  rssMb(): { now: number; peak: number };
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

const cleanEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env.KUBECONFIG;
  delete env.KUBERNETES_SERVICE_HOST;
  delete env.KUBERNETES_SERVICE_PORT;
  return env;
};

export async function startDevServe(): Promise<DevServe> {
  const child = spawn(VGATE_BIN, ["serve", "--dev", "--port", "0", "--bind-address", "127.0.0.1"], {
    env: cleanEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  child.stdout!.on("data", (c: Buffer) => (stdout += String(c)));
  let stderr = "";
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  const url = await new Promise<string>((res, rej) => {
    child.stderr!.on("data", (c: Buffer) => {
      stderr += String(c);
      const m = /serving on (https:\/\/\S+)/.exec(stderr);
      if (m) res(m[1]!);
    });
    void exited.then((code) => rej(new Error(`vgate exited with ${code}: ${stderr}`)));
  });
  const pid = child.pid!;
  return {
    child,
    url,
    port: Number(new URL(url).port),
    logLines: () => stdout.split("\n").filter(Boolean),
    rssMb: () => {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]);
      return { now: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
    },
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** What a raw connection saw: the first answer (if any) and when the server closed it. */
export interface RawExchange {
  socket: TLSSocket;
  /** Resolves with the first response's status line, headers and body text once complete. */
  answer: Promise<RawAnswer>;
  /** Resolves with the milliseconds from connecting to the server's close. */
  closed: Promise<number>;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from connecting to the whole answer. */
  ms: number;
}

/** Opens a TLS connection to 127.0.0.1:`port` and writes `head` once it is up. */
export function rawConnect(
  port: number,
  head = "",
  client?: { cert: string; key: string },
): RawExchange {
  const started = Date.now();
  const socket = connect({ host: "127.0.0.1", port, rejectUnauthorized: false, ...client });
  socket.on("error", () => undefined);
  if (head) socket.once("secureConnect", () => socket.write(head));
  let received = "";
  const answer = new Promise<RawAnswer>((res, rej) => {
    const parse = () => {
      const end = received.indexOf("\r\n\r\n");
      if (end < 0) return;
      const [statusLine = "", ...lines] = received.slice(0, end).split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(":");
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const length = Number(headers["content-length"] ?? 0);
      const body = received.slice(end + 4);
      if (Buffer.byteLength(body) < length) return;
      res({ status: Number(statusLine.split(" ")[1]), headers, body, ms: Date.now() - started });
    };
    socket.on("data", (c: Buffer) => {
      received += String(c);
      parse();
    });
    socket.once("close", () => rej(new Error(`closed without an answer: ${received}`)));
  });
  answer.catch(() => undefined);
  const closed = new Promise<number>((res) =>
    socket.once("close", () => res(Date.now() - started)),
  );
  return { socket, answer, closed };
}

/** A POST head for an admission route. */
export function postHead(
  headers: Record<string, string | number>,
  path = "/validate/ownedaccesskeys",
): string {
  const lines = Object.entries({
    Host: "localhost",
    "Content-Type": "application/json",
    ...headers,
  })
    .map(([k, v]) => `${k}: ${v}`)
    .join("\r\n");
  return `POST ${path} HTTP/1.1\r\n${lines}\r\n\r\n`;
}
