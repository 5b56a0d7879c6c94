// Node's system errors (ENOENT, EISDIR, EACCES, …) in words. The plugin never shows an errno name
// or a stack: what failed, on which path, and what the problem is. Classified by the error's
// `code` and `syscall`, never by its message.

/** A Node system error: an errno `code` and the `syscall` that failed. */
export function isSystemError(err: unknown): err is NodeJS.ErrnoException {
  const e = err as NodeJS.ErrnoException | null | undefined;
  return (
    typeof e === "object" &&
    e !== null &&
    typeof e.code === "string" &&
    typeof e.syscall === "string"
  );
}

/** The first system error in `err` and its causes. */
export function systemErrorIn(err: unknown): NodeJS.ErrnoException | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 8; depth++) {
    if (isSystemError(e)) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What went wrong with a file, in words (never a bare errno name). */
export function fileProblem(err: unknown): string {
  switch ((err as NodeJS.ErrnoException | undefined)?.code) {
    case "ENOENT":
      return "no such file or directory";
    case "ENOTDIR":
      return "a part of the path is not a directory";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EROFS":
      return "the file system is read-only";
    case "ENOSPC":
    case "EDQUOT":
      return "no space left on the device";
    case "EISDIR":
      return "it is a directory";
    case "ENAMETOOLONG":
      return "the file name is too long";
    case "EEXIST":
      return "a file of that name appeared meanwhile";
    case "ELOOP":
      return "too many symbolic links";
    case "EMFILE":
    case "ENFILE":
      return "too many open files";
    case "EIO":
      return "an input/output error of the device";
    default:
      return "it could not be read or written";
  }
}

/** A sentence for a system error the plugin did not expect: the operation, the path, the problem. */
export function systemErrorSentence(err: NodeJS.ErrnoException): string {
  const path = err.path === undefined ? "" : ` ${JSON.stringify(err.path)}`;
  const syscall = err.syscall ?? "";
  if (syscall.startsWith("spawn")) {
    const what = err.path === undefined ? "a command" : `the command${path}`;
    return err.code === "ENOENT"
      ? `cannot run ${what}: it was not found on PATH`
      : `cannot run ${what}: ${fileProblem(err)}`;
  }
  if (/^(write|rename|mkdir|mkdtemp|unlink|chmod|fsync|ftruncate)/.test(syscall)) {
    return `cannot write${path || " a file"}: ${fileProblem(err)}`;
  }
  if (/^(open|read|stat|lstat|access|scandir|readlink|realpath)/.test(syscall)) {
    return `cannot read${path || " a file"}: ${fileProblem(err)}`;
  }
  return `a system call failed (${syscall}${path}): ${fileProblem(err)}`;
}

/** What to do about a file or command named in a kubeconfig that failed. */
export function kubeconfigFix(err: NodeJS.ErrnoException): string {
  return err.syscall?.startsWith("spawn")
    ? "install it, or fix the exec command of the kubeconfig's user"
    : "fix the path in the kubeconfig";
}
