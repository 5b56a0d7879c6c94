// Files that hold a key (docs/decisions.md OAK-31). They are written whole or not at all, readable
// by their owner only, whatever was at the path before:
//   1. reserve: check the target (a symbolic link or a directory there is refused, and nothing is
//      written through it), then create a temporary file next to it, exclusively (O_CREAT|O_EXCL,
//      so no link is followed) with mode 0600. This is done before the key exists, so a
//      directory that is missing or not writable costs no key.
//   2. commit: write the content, flush it to disk, and rename the temporary file onto the target.
//      rename(2) replaces the path itself: an existing file (whatever its mode) is replaced by the
//      new 0600 one, and a link put there in the meantime is replaced, not followed.
// Errors name the path and say what is wrong in words; the temporary file is removed.

import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, open, rename, unlink, type FileHandle } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { CliError } from "../cli/errors.js";
import { fileProblem } from "../os/system-errors.js";

export { fileProblem };

/** A reserved temporary file next to `target`, ready to become it. */
export class SecretFile {
  private finished = false;

  private constructor(
    /** The path the user gave. */
    readonly target: string,
    private readonly temporary: string,
    private readonly handle: FileHandle,
  ) {}

  /**
   * Step 1: refuses a link or a directory at `target`, and creates the temporary file (mode 0600)
   * in its directory. `flag` names the option in errors (e.g. --kubeconfig-out).
   */
  static async reserve(target: string, flag: string): Promise<SecretFile> {
    const where = `${flag} ${JSON.stringify(target)}`;
    const existing = await lstat(target).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw new CliError(`cannot write ${where}: ${fileProblem(err)}`);
    });
    if (existing?.isSymbolicLink()) {
      throw new CliError(
        `cannot write ${where}: it is a symbolic link, which is not followed for a file that holds a key; give the path it points to, or remove the link`,
      );
    }
    if (existing?.isDirectory()) {
      throw new CliError(
        `cannot write ${where}: it is a directory; give the path of a file (in that directory or elsewhere)`,
      );
    }
    const dir = dirname(resolve(target));
    const temporary = join(dir, `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
    let handle: FileHandle;
    try {
      handle = await open(
        temporary,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      );
    } catch (err) {
      const problem =
        (err as NodeJS.ErrnoException).code === "ENOENT"
          ? `the directory ${JSON.stringify(dir)} does not exist; create it first, or give a path in a directory that exists`
          : `${fileProblem(err)} (in ${JSON.stringify(dir)}); give a path in a directory you can write`;
      throw new CliError(`cannot write ${where}: ${problem}`);
    }
    try {
      // The mode asked for in open() is cut by the umask; set it exactly.
      await handle.chmod(0o600);
    } catch (err) {
      await handle.close().catch(() => undefined);
      await unlink(temporary).catch(() => undefined);
      throw new CliError(`cannot write ${where}: ${fileProblem(err)}`);
    }
    return new SecretFile(target, temporary, handle);
  }

  /** Step 2: the content, on disk, at the target. On failure nothing is left behind. */
  async commit(content: string, flag: string): Promise<void> {
    const where = `${flag} ${JSON.stringify(this.target)}`;
    if (this.finished) throw new Error("SecretFile: already committed or discarded");
    try {
      await this.handle.writeFile(content, "utf8");
      await this.handle.sync();
      await this.handle.close();
      await rename(this.temporary, this.target);
      this.finished = true;
    } catch (err) {
      await this.discard();
      throw new CliError(`cannot write ${where}: ${fileProblem(err)}`);
    }
  }

  /** Removes the temporary file (nothing was written to the target). */
  async discard(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    await this.handle.close().catch(() => undefined);
    await unlink(this.temporary).catch(() => undefined);
  }
}
