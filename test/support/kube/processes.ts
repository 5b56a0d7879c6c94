// Starting and stopping test-rig processes under supervise.js, on free loopback ports.

import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SUPERVISOR = join(dirname(fileURLToPath(import.meta.url)), "supervise.js");

export interface Supervised {
  readonly child: ChildProcess;
  readonly name: string;
  readonly logFile: string;
  /** Whether the process has exited. */
  exited(): boolean;
  /** The last lines of its log, for error messages. */
  logTail(lines?: number): Promise<string>;
  /** SIGTERM, then SIGKILL after the supervisor's grace period; resolves once it is gone. */
  stop(): Promise<void>;
}

export interface SuperviseOptions {
  /** Removed once the process is gone, whatever happened. */
  removeDir?: string;
  env?: NodeJS.ProcessEnv;
}

/** Starts `command` under the supervisor; its output goes to `logFile`. */
export function supervise(
  name: string,
  command: string,
  args: readonly string[],
  logFile: string,
  opts: SuperviseOptions = {},
): Supervised {
  const flags = [`--log=${logFile}`, ...(opts.removeDir ? [`--remove=${opts.removeDir}`] : [])];
  const child = spawn(process.execPath, [SUPERVISOR, ...flags, "--", command, ...args], {
    stdio: ["pipe", "inherit", "inherit"],
    env: opts.env ?? process.env,
  });
  // The pipe keeps nothing alive: the test run may exit with it open, which stops the process.
  child.unref();
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    name,
    logFile,
    exited,
    logTail: async (lines = 20) => {
      const text = await readFile(logFile, "utf8").catch(() => "");
      return text.trimEnd().split("\n").slice(-lines).join("\n");
    },
    stop: async () => {
      // Waiting for the exit must keep this process alive, or it could end first.
      child.ref();
      if (!exited()) child.stdin!.end();
      await gone;
    },
  };
}

/**
 * A port on 127.0.0.1 that nothing listens on now, for a process started later. Taken below the
 * kernel's ephemeral range when there is room: a port from that range (what listen(0) gives) is
 * also what every outgoing connection on the machine is given, and a test's many connections took
 * such a port between the pick and the listen ("the port is in use"). Below it, only another
 * pick can collide, and random picks from some 17,000 ports rarely do.
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const floor = 15_000;
  for (let attempt = 0; low - floor > 1000 && attempt < 20; attempt++) {
    const port = floor + Math.floor(Math.random() * (low - floor));
    if (await bindable(port)) return port;
  }
  return listenPort(0);
}

function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    if (low && high) return [low, high];
  } catch {
    // Not Linux: the range is unknown, so listen(0) it is.
  }
  return [0, 0];
}

async function bindable(port: number): Promise<boolean> {
  try {
    return (await listenPort(port)) === port;
  } catch {
    return false;
  }
}

function listenPort(port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(port, "127.0.0.1", () => {
      const bound = (srv.address() as AddressInfo).port;
      srv.close(() => resolvePort(bound));
    });
  });
}

/** Polls `probe` every 100 ms until it is true; fails early when `proc` exits. */
export async function waitUntil(
  what: string,
  proc: Supervised,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exited()) {
      throw new Error(`${proc.name} exited before ${what}; its log ends:\n${await proc.logTail()}`);
    }
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `${proc.name}: no ${what} within ${timeoutMs} ms; its log ends:\n${await proc.logTail()}`,
  );
}
