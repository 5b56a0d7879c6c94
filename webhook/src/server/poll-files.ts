// Watching files that are rotated in place (certificates, CA bundles): Secret volumes swap a
// symlink, editors and tools overwrite or rename. A poll compares each file's inode, mtime and size
// and reads the files again when any changed; what it reads is passed on only if the files did not
// change again while they were read, so a half-written file is never used. The last good value
// stays until a poll reads a good one, and `onError` hears of each distinct bad state once.

import { stat } from "node:fs/promises";

export function pollFiles<T>(
  files: readonly string[],
  read: () => Promise<T>,
  onChange: (value: T) => void,
  onError: (err: Error) => void,
  intervalMs: number,
): () => void {
  let served = "";
  let reported = "";
  // The inode is part of it: a symlink swap or a copy that keeps mtimes still changes it.
  const fingerprint = async (): Promise<string> => {
    const stats = await Promise.all(files.map((f) => stat(f)));
    return stats.map((s) => `${s.ino}:${s.mtimeMs}:${s.size}`).join(":");
  };
  const poll = async (): Promise<void> => {
    const f = await fingerprint();
    if (f === served) return;
    const value = await read();
    // Unchanged while read: else a later poll reads it again, whole.
    if ((await fingerprint()) !== f) return;
    onChange(value);
    served = f;
    reported = "";
  };
  void fingerprint().then(
    (f) => (served = f),
    () => undefined,
  );
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    poll()
      .catch((err: Error) => {
        if (err.message === reported) return;
        reported = err.message;
        onError(err);
      })
      .finally(() => (busy = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
