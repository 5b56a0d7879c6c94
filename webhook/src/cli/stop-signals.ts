// How the long-running commands (`vgate serve`, `vgate sync`) end: SIGTERM or SIGINT starts a
// graceful stop, a watchdog ends the process with status 1 should the stop not finish in time, and
// once stopped (or failed to start) the process exits even if something still holds the event
// loop: a pod that neither serves nor exits is worse than either.

import { flushLogs, type Logger } from "../server/logger.js";
import { EXIT } from "./errors.js";

/** After a stop, how long anything left may take to let go before the process exits regardless. */
const STOPPED_EXIT_MS = 1000;
/** How long a failed start may take to wind down before the process is ended regardless. */
const START_FAILURE_EXIT_MS = 2000;

export interface StopOnSignalsOptions {
  logger: Logger;
  /** The graceful stop. */
  stop: () => Promise<void>;
  /** How long the stop may take before the process exits with status 1. */
  deadlineMs: number;
  /** A second signal while stopping. */
  onSecondSignal: (signal: NodeJS.Signals) => void;
  /** Settles when the process ends for another reason: a signal after it counts as a second one. */
  ended?: Promise<unknown>;
}

/** Settles with the exit status once a signal's graceful stop is done (0) or failed (1). */
export function stopOnSignals(o: StopOnSignalsOptions): Promise<number> {
  const { logger } = o;
  return new Promise<number>((resolve) => {
    let stopping = false;
    void o.ended?.then(
      () => (stopping = true),
      () => (stopping = true),
    );
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) return o.onSecondSignal(signal);
      stopping = true;
      logger.info({ signal }, "received signal; shutting down");
      setTimeout(() => {
        logger.error("shutdown did not finish in time; exiting");
        flushLogs(logger);
        process.exit(EXIT.FAILURE);
      }, o.deadlineMs).unref();
      o.stop().then(
        () => {
          flushLogs(logger);
          resolve(EXIT.OK);
        },
        (err: unknown) => {
          logger.error(
            { err: err instanceof Error ? err.message : String(err) },
            "shutdown failed",
          );
          flushLogs(logger);
          resolve(EXIT.FAILURE);
        },
      );
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}

/** Ends the process with `code` soon after a stop, whatever still holds the event loop. */
export function exitAfterStop(code: number): void {
  setTimeout(() => process.exit(code), STOPPED_EXIT_MS).unref();
}

/** Ends the process soon after a failed start (the caller stopped what it started). */
export function exitAfterFailedStart(): void {
  setTimeout(() => process.exit(EXIT.FAILURE), START_FAILURE_EXIT_MS).unref();
}
