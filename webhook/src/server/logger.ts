// pino JSON logs. Every record passes through redactSecrets, so no code path can log a secret by
// accident, including error messages and objects logged at debug level.

import { pino, type DestinationStream, type Logger, type LevelWithSilent } from "pino";
import { mayHoldSecret, redactSecrets } from "./redact.js";

export type { Logger };

export const LOG_LEVELS: readonly LevelWithSilent[] = [
  "fatal",
  "error",
  "warn",
  "info",
  "debug",
  "trace",
  "silent",
];

export function createLogger(
  level: LevelWithSilent = "info",
  destination?: DestinationStream,
): Logger {
  const options = {
    level,
    // No base fields: each request line has its own `name` (the object's), and pid and hostname
    // are the container runtime's to add.
    base: undefined,
    timestamp: isoTimestamp,
    formatters: {
      level: (label: string) => ({ level: label }),
      log: (record: Record<string, unknown>) => redactSecrets(record) as Record<string, unknown>,
    },
    hooks: {
      // The message string is not part of the record `formatters.log` sees.
      logMethod(this: Logger, args: unknown[], method: (...a: unknown[]) => void) {
        // Nearly every call passes a constant message; copy the arguments only when one needs it.
        const clean = args.every((a) => typeof a !== "string" || !mayHoldSecret(a));
        method.apply(
          this,
          clean ? args : args.map((a) => (typeof a === "string" ? redactSecrets(a) : a)),
        );
      },
    },
  };
  if (destination) return pino(options, destination);
  // Asynchronous, buffered writes to stdout (pino's recommended production setup): one write per
  // 4 KiB of lines instead of one per request, and a slow log reader never stalls requests. Lines
  // wait at most a second; flushLogs() writes the rest on shutdown.
  const stdout = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  const timer = setInterval(() => stdout.flush(), 1000);
  timer.unref();
  return pino(options, stdout);
}

let cachedSecond = -1;
let cachedPrefix = "";

/**
 * pino's `,"time":"…"` fragment in RFC 3339 UTC with milliseconds, like pino's isoTime. The date
 * and time up to the second are formatted once per second, not once per line.
 */
export function isoTimestamp(now = Date.now()): string {
  const second = Math.floor(now / 1000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = `,"time":"${new Date(second * 1000).toISOString().slice(0, 20)}`;
  }
  return `${cachedPrefix}${String(now - second * 1000).padStart(3, "0")}Z"`;
}

/** Writes out buffered log lines; call before the process exits. */
export function flushLogs(logger: Logger): void {
  try {
    logger.flush();
  } catch {
    // Nothing more can be done about a log destination that cannot be written.
  }
}
