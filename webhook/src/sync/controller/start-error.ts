// Why `vgate sync` cannot start (or cannot take a new config): a file or flag value it was given
// does not work. The message says what to fix and names the flag or file; the CLI prints it as
// `error: …` and exits 1, as it does for any failure that is not a usage error.

export class SyncStartError extends Error {
  override readonly name = "SyncStartError";
}
