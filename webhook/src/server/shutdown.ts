// Graceful shutdown of the HTTPS server on SIGTERM, as Kubernetes stops a pod: readiness turns
// false at once, connections are still accepted for a while (the endpoints controller and every
// node's kube-proxy take a few seconds to stop sending new ones here), then the listener closes,
// requests in flight get their answers, idle keep-alive connections are closed, and whatever is
// left when the grace period runs out is cut.

import type { ServerResponse } from "node:http";
import type { Server } from "node:https";
import type { Logger } from "./logger.js";

/** How long connections are still accepted after the signal (--shutdown-delay). */
export const DEFAULT_SHUTDOWN_DELAY_MS = 5_000;
/**
 * From the signal to the last connection cut (--shutdown-timeout): below the 30 s a pod gets by
 * default (terminationGracePeriodSeconds) between SIGTERM and SIGKILL, leaving time to flush.
 */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 25_000;
/** How often connections that have become idle are looked for and closed during a drain. */
const IDLE_SWEEP_MS = 100;

export interface DrainOptions {
  /** Connections are still accepted this long after the drain starts. */
  delayMs: number;
  /** From the drain's start to cutting whatever connections remain. */
  timeoutMs: number;
}

export interface DrainReport {
  /** Requests that had no complete answer when their connections were cut (0 when drained). */
  cut: number;
  /** Milliseconds from the drain's start to the last connection closed or cut. */
  ms: number;
}

/**
 * The drain of one server. Created before the server (readiness reads `draining` from the start),
 * then attached to it. Every answer written once the drain has started carries `Connection: close`,
 * so clients open their next connection elsewhere, and connections end with their last answer.
 */
export class GracefulShutdown {
  private started = false;
  private server: Server | undefined;
  private readonly answering = new Set<ServerResponse>();
  private cutShort: (() => void) | undefined;

  /** True once the drain has started: /readyz answers 503 from then on. */
  get draining(): boolean {
    return this.started;
  }

  /** Requests being answered now, on any connection. */
  get inFlight(): number {
    return this.answering.size;
  }

  attach(server: Server): void {
    this.server = server;
    // Before the app's listener, so that a request is counted before it is handled.
    server.prependListener("request", (_req, res: ServerResponse) => {
      this.answering.add(res);
      if (this.started) closeAfter(res);
      res.once("close", () => this.answering.delete(res));
    });
  }

  /** Ends the drain's waits at once (a second signal): remaining connections are cut. */
  hurry(): void {
    this.cutShort?.();
  }

  /** Drains the attached server; resolves once its last connection is closed or cut. */
  async drain(opts: DrainOptions, logger: Logger): Promise<DrainReport> {
    const server = this.server;
    if (!server) throw new Error("GracefulShutdown.drain before attach");
    const began = Date.now();
    this.started = true;
    for (const res of this.answering) closeAfter(res);
    let why = "shutdown timeout reached";
    const hurried = new Promise<void>(
      (resolve) =>
        (this.cutShort = () => {
          why = "asked to stop now";
          resolve();
        }),
    );
    const deadline = sleep(opts.timeoutMs);
    const until = (p: Promise<unknown>) => Promise.race([p, hurried, deadline.promise]);
    logger.info(
      { delayMs: opts.delayMs, timeoutMs: opts.timeoutMs, inFlight: this.inFlight },
      "shutting down: not ready; still accepting connections during the shutdown delay",
    );
    const delay = sleep(opts.delayMs);
    await until(delay.promise);
    delay.cancel();
    let allClosed = false;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    void closed.then(() => (allClosed = true));
    server.closeIdleConnections();
    logger.info({ inFlight: this.inFlight }, "listener closed; waiting for requests in flight");
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    await until(closed);
    clearInterval(sweep);
    deadline.cancel();
    // A settled promise's callbacks run before the next macrotask: let `allClosed` catch up.
    await Promise.resolve();
    const cut = this.inFlight;
    if (!allClosed) {
      logger.warn({ cut, timeoutMs: opts.timeoutMs }, `${why}: cutting the remaining connections`);
    }
    server.closeAllConnections();
    const ms = Date.now() - began;
    if (allClosed) logger.info({ ms }, "drained: every request in flight was answered");
    return { cut, ms };
  }
}

/** Ask for the connection to end with this answer, if its headers are still to be written. */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader("Connection", "close");
}

function sleep(ms: number): { promise: Promise<void>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return { promise, cancel: () => clearTimeout(timer) };
}
