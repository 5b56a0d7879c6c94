// pino JSON logs. Every record passes through redactSecrets, so no code path can log a secret by
// accident, including error messages and objects logged at debug level.

import { pino, type DestinationStream, type Logger, type LevelWithSilent } from "pino";
import { redactSecrets } from "./redact.js";

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
    base: { name: "vgate" },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label: string) => ({ level: label }),
      log: (record: Record<string, unknown>) => redactSecrets(record) as Record<string, unknown>,
    },
    hooks: {
      // The message string is not part of the record `formatters.log` sees.
      logMethod(this: Logger, args: unknown[], method: (...a: unknown[]) => void) {
        method.apply(
          this,
          args.map((a) => (typeof a === "string" ? redactSecrets(a) : a)),
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

/** Writes out buffered log lines; call before the process exits. */
export function flushLogs(logger: Logger): void {
  try {
    logger.flush();
  } catch {
    // Nothing more can be done about a log destination that cannot be written.
  }
}
