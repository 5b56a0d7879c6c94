// Notices when the config file changes. A ConfigMap volume never rewrites the file in place: the
// kubelet writes a new timestamped directory and swaps the `..data` symlink the file points
// through, which fs.watch on the file itself misses. So the file's directory is watched (any event
// there triggers a check), and the file is also checked every few seconds in case the watch misses
// something (network file systems, inotify limits). A check compares the content's digest, so
// touches and unrelated files in the directory change nothing.

import { createHash } from "node:crypto";
import { watch, type FSWatcher } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";

export interface ConfigWatchOptions {
  /** How often the file is read regardless of events (default 5 s). */
  intervalMs?: number;
  /** How long after a directory event the file is read, so a burst of events is one check. */
  debounceMs?: number;
}

/**
 * This process is out of file descriptors: the read says nothing about the file. Taking it for a
 * change would reload the same config once descriptors are back, which is not what was asked for.
 */
const OUT_OF_DESCRIPTORS = new Set(["EMFILE", "ENFILE"]);

/**
 * The content's digest, or a marker for a file that cannot be read now; undefined when this
 * process cannot tell (out of file descriptors).
 */
async function digest(path: string): Promise<string | undefined> {
  try {
    return createHash("sha256")
      .update(await readFile(path))
      .digest("hex");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    return OUT_OF_DESCRIPTORS.has(code) ? undefined : `unreadable:${code}`;
  }
}

export class ConfigWatcher {
  private last: string | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(
    private readonly path: string,
    /** Called once per change of content (not concurrently); errors are the caller's to log. */
    private readonly onChange: () => Promise<void>,
    private readonly options: ConfigWatchOptions = {},
  ) {}

  /** Starts watching; the content now is the baseline (it was loaded at start). */
  async start(): Promise<void> {
    this.last = await digest(this.path);
    try {
      this.watcher = watch(dirname(this.path), { persistent: false }, () => this.soon());
      this.watcher.on("error", () => this.watcher?.close());
    } catch {
      // No directory watch (e.g. inotify exhausted): the periodic check still runs.
    }
    this.timer = setInterval(() => void this.check(), this.options.intervalMs ?? 5000);
    this.timer.unref();
  }

  /** Checks now (also what the timer and the directory watch do); resolves when handled. */
  check(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.checking) {
      this.again = true;
      return this.checking;
    }
    this.checking = this.compare().finally(() => {
      this.checking = undefined;
      if (this.again) {
        this.again = false;
        void this.check();
      }
    });
    return this.checking;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    clearTimeout(this.debounce);
    this.watcher?.close();
    await this.checking;
  }

  private soon(): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.check(), this.options.debounceMs ?? 100);
    this.debounce.unref();
  }

  private async compare(): Promise<void> {
    const now = await digest(this.path);
    if (now === undefined || now === this.last || this.closed) return;
    this.last = now;
    await this.onChange().catch(() => undefined);
  }
}
