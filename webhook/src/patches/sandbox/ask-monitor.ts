// Asking a sandbox child's monitor thread (child-monitor.ts) which job and patch it runs, within a
// grace that counts the time this process runs. The answer only makes an error message exact: the
// pool knows what it needs to kill a child without it.
import type { SandboxProcess } from "./child-process.js";
import type { Progress } from "./protocol.js";

/**
 * A job that has had its deadline in wall time this many times over is stopped even if it got
 * little CPU: nothing an expression can do sleeps, so only an overloaded machine gets here. A
 * monitor query's wait ends after as many graces of wall time.
 */
export const WALL_FACTOR = 10;
/** How often a monitor query's grace looks at the clock; one look counts two ticks at most. */
const ASK_TICK_MS = 5;
/** How much longer than askMonitor's own wait a monitor query waits before it gives up on its own. */
const ASK_BACKSTOP_MS = 1000;

/**
 * Asks a child's monitor, waiting `graceMs` for the answer: time in which this process ran. On
 * a loaded machine everything stalls now and then, for hundreds of milliseconds (measured:
 * 700 ms), the monitor with it; a stall counts as one tick, so the monitor still has its grace
 * once things run again. WALL_FACTOR graces of wall time end the wait in any case. And when the
 * grace ends the answer may be here, unread: Node runs due timers before it reads sockets, so
 * the pool reads what has arrived (setImmediate runs after that) before it gives up.
 */
export function askMonitor(proc: SandboxProcess, graceMs: number): Promise<Progress | undefined> {
  return new Promise((resolve) => {
    const started = performance.now();
    let last = started;
    let left = graceMs;
    const tick = (): void => {
      const now = performance.now();
      left -= Math.min(now - last, 2 * ASK_TICK_MS);
      last = now;
      if (left > 0 && now - started < graceMs * WALL_FACTOR) {
        timer = setTimeout(tick, Math.min(ASK_TICK_MS, left));
      } else {
        setImmediate(() => resolve(undefined));
      }
    };
    let timer = setTimeout(tick, Math.min(ASK_TICK_MS, graceMs));
    // The query's own timeout must not end the wait first: it is only a backstop.
    void proc.query(graceMs * WALL_FACTOR + ASK_BACKSTOP_MS).then((progress) => {
      if (progress === undefined) return;
      clearTimeout(timer);
      resolve(progress);
    });
  });
}
