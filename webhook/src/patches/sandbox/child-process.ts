// One sandbox child as the server sees it (docs/decisions.md EPS-8): a node process with its own
// V8 limits, frames in and out on fd 3, progress queries to its monitor thread on fd 4, stderr
// kept only as a short tail for diagnosis. Everything the child sends is untrusted: frames are
// size-capped and a malformed one ends the child. The server never waits on the child to stop:
// kill() is SIGKILL.
//
// Children hold the server's event loop open only while they have work (ref/unref), and every
// child kills itself when the server goes away (child-monitor.ts); on a normal exit the server
// also kills them synchronously (see the `exit` hook below).
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readSync } from "node:fs";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { FrameDecoder, writeFrame } from "./frames.js";
import { ANSWER_BYTES, decodeAnswer, type Progress, type ToChild } from "./protocol.js";

export interface ChildLimits {
  /** V8 old generation (--max-old-space-size), MiB. */
  heapMb: number;
  /** V8 semi-space (--max-semi-space-size), MiB; the young generation is three of them. */
  semiSpaceMb: number;
  /** V8 stack (--stack-size), KiB. */
  stackKb: number;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last bytes the child wrote to stderr (V8 writes why it aborted there). */
  stderr: string;
  /** Why the server ended it, if it did (a protocol error, for one). */
  error?: Error;
}

export interface ChildEvents {
  message(message: unknown): void;
  exit(info: ExitInfo): void;
}

const CHILD_MAIN = fileURLToPath(new URL("./child-main.js", import.meta.url));
const STDERR_TAIL = 4096;
/** V8's out-of-memory report with its stack traces is a few KiB. */
const MAX_STDERR = 256 * 1024;

/** Children alive in this process, killed synchronously when it exits. */
const live = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of live) sigkill(child);
});

/**
 * SIGKILL to `child`, if it was ever spawned. When a spawn fails for want of file descriptors
 * (EMFILE, ENFILE), Node keeps the process handle with pid 0, and ChildProcess.kill() then calls
 * kill(0, SIGKILL): every process in the caller's process group dies, vgate and its parents
 * (docs/decisions.md EPS-35). Without a pid there is nothing to signal.
 */
function sigkill(child: ChildProcess): void {
  if (child.pid !== undefined && child.pid > 0) child.kill("SIGKILL");
}

/** V8 flags for a child. Nothing of the server's own command line or environment is passed on. */
export function childArgs(limits: ChildLimits, script: readonly string[] = [CHILD_MAIN]): string[] {
  return [
    `--max-old-space-size=${limits.heapMb}`,
    `--max-semi-space-size=${limits.semiSpaceMb}`,
    `--stack-size=${limits.stackKb}`,
    // One background thread for V8 (GC, compiling): a child runs one job at a time, and the
    // threads of several children would compete with their main threads for the same cores.
    "--v8-pool-size=1",
    "--no-warnings",
    ...script,
  ];
}

export class SandboxProcess {
  readonly pid: number;
  private readonly child: ChildProcess;
  /** The pipes: none when spawning failed before it made them (EMFILE, ENFILE). */
  private readonly channel: Socket | undefined;
  private readonly monitor: Socket | undefined;
  private readonly stderr: Socket | undefined;
  private readonly decoder: FrameDecoder;
  private stderrTail = "";
  private stderrBytes = 0;
  private answers: Buffer[] = [];
  private answered = 0;
  private waiting: ((progress: Progress | undefined) => void)[] = [];
  private gone = false;
  private killError: Error | undefined;
  private referenced = true;
  private readonly status: ProcFile;
  private readonly schedstat: ProcFile;

  /** `script` is for tests: a stand-in for child-main.js, with its arguments. */
  constructor(
    limits: ChildLimits,
    maxFrameBytes: number,
    private readonly events: ChildEvents,
    script?: readonly string[],
  ) {
    this.child = spawn(process.execPath, childArgs(limits, script), {
      stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"],
      env: {},
      cwd: "/",
      windowsHide: true,
    });
    this.pid = this.child.pid ?? -1;
    this.status = new ProcFile(`/proc/${this.pid}/status`);
    this.schedstat = new ProcFile(`/proc/${this.pid}/schedstat`);
    // Node leaves `stdio` null when spawning fails for want of file descriptors; the error
    // event below then ends this child like any other failed spawn.
    const stdio = (this.child.stdio as (Socket | null)[] | null) ?? [];
    this.stderr = stdio[2] ?? undefined;
    this.channel = stdio[3] ?? undefined;
    this.monitor = stdio[4] ?? undefined;
    this.decoder = new FrameDecoder(maxFrameBytes);
    if (this.pid > 0) live.add(this.child);
    this.stderr?.on("data", (chunk: Buffer) => this.onStderr(chunk));
    this.channel?.on("data", (chunk: Buffer) => this.onData(chunk));
    this.monitor?.on("data", (chunk: Buffer) => this.onAnswer(chunk));
    // A write to a child that just died fails with EPIPE; its exit is what counts.
    for (const stream of this.streams()) stream.on("error", () => undefined);
    this.child.on("error", (err) => {
      // Spawning failed: there is no process, and no exit to wait for.
      if (this.child.pid === undefined) this.onExit(null, null, err);
      else this.kill(err);
    });
    // `close`, not `exit`: the stderr tail is complete only once the pipes are.
    this.child.on("close", (code, signal) => this.onExit(code, signal));
    this.unref();
  }

  send(message: ToChild): void {
    if (!this.gone && this.channel !== undefined) writeFrame(this.channel, message);
  }

  /**
   * Asks the monitor thread where the child is. Undefined when no answer comes within `graceMs`
   * or the child is gone: the caller then acts without it.
   */
  query(graceMs: number): Promise<Progress | undefined> {
    const monitor = this.monitor;
    if (this.gone || monitor === undefined) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      let settled = false;
      const settle = (progress: Progress | undefined): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(progress);
      };
      const timer = setTimeout(() => settle(undefined), graceMs);
      this.waiting.push(settle);
      monitor.write("?");
    });
  }

  /** Resident memory in bytes, from /proc (Linux); undefined where there is none. */
  rssBytes(): number | undefined {
    if (this.gone) return undefined;
    const kb = VM_RSS.exec(this.status.read() ?? "")?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  }

  /**
   * CPU time of the child's main thread (where expressions run), in ms, from /proc (Linux);
   * undefined where there is none.
   */
  cpuMs(): number | undefined {
    if (this.gone) return undefined;
    const ns = Number(this.schedstat.read()?.split(" ")[0]);
    return Number.isFinite(ns) ? ns / 1e6 : undefined;
  }

  /**
   * SIGKILL; `exit` follows, and the event loop waits for it, pipes closed and all (a moment).
   * Idempotent.
   */
  kill(error?: Error): void {
    this.killError ??= error;
    if (this.gone) return;
    sigkill(this.child);
    this.referenced = false;
    this.ref();
  }

  /** Keeps the server's event loop alive while this child has work, and only then. */
  ref(): void {
    if (this.referenced || this.gone) return;
    this.referenced = true;
    this.child.ref();
    for (const s of this.streams()) s.ref();
  }

  unref(): void {
    if (!this.referenced) return;
    this.referenced = false;
    this.child.unref();
    for (const s of this.streams()) s.unref();
  }

  private streams(): Socket[] {
    return [this.channel, this.monitor, this.stderr].filter((s) => s !== undefined);
  }

  private onData(chunk: Buffer): void {
    let messages: unknown[];
    try {
      messages = this.decoder.push(chunk);
    } catch (err) {
      this.kill(err as Error);
      return;
    }
    for (const message of messages) {
      if (this.gone || this.killError) return;
      this.events.message(message);
    }
  }

  /** Keeps the tail; a child that writes more than a crash report would is broken. */
  private onStderr(chunk: Buffer): void {
    this.stderrTail = (this.stderrTail + chunk.toString("latin1")).slice(-STDERR_TAIL);
    this.stderrBytes += chunk.length;
    if (this.stderrBytes > MAX_STDERR) {
      this.kill(new Error(`protocol error: more than ${MAX_STDERR} bytes on stderr`));
    }
  }

  private onAnswer(chunk: Buffer): void {
    this.answers.push(chunk);
    this.answered += chunk.length;
    while (this.answered >= ANSWER_BYTES) {
      const all = Buffer.concat(this.answers);
      const progress = decodeAnswer(all.subarray(0, ANSWER_BYTES));
      this.answers = [all.subarray(ANSWER_BYTES)];
      this.answered -= ANSWER_BYTES;
      const waiting = this.waiting.shift();
      if (waiting === undefined) {
        this.kill(new Error("protocol error: an answer nobody asked for"));
        return;
      }
      waiting(progress);
    }
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, error?: Error): void {
    if (this.gone) return;
    this.killError ??= error;
    this.gone = true;
    live.delete(this.child);
    this.status.close();
    this.schedstat.close();
    for (const settle of this.waiting.splice(0)) settle(undefined);
    // Nothing may keep the server alive on behalf of a dead child.
    for (const s of this.streams()) s.destroy();
    this.events.exit({ code, signal, stderr: this.stderrTail, error: this.killError });
  }
}

const VM_RSS = /^VmRSS:\s+(\d+) kB$/m;

/** A /proc file of a child, opened once and read again in place (a few µs a read). */
class ProcFile {
  private fd: number | undefined;
  private failed = false;
  private readonly buffer = Buffer.alloc(4096);

  constructor(private readonly path: string) {}

  read(): string | undefined {
    if (this.failed) return undefined;
    try {
      this.fd ??= openSync(this.path, "r");
      return this.buffer.toString(
        "latin1",
        0,
        readSync(this.fd, this.buffer, 0, this.buffer.length, 0),
      );
    } catch {
      // No /proc here, or the process is gone.
      this.failed = true;
      this.close();
      return undefined;
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
