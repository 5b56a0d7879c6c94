// Why a file the user named cannot be used, as a sentence that says what to do: never Node's bare
// ENOENT/EISDIR/EACCES, and never the file's content. Classified by the error's code, the type
// Node gives a failed system call.

import { getSystemErrorMap } from "node:util";

const REASONS: Record<string, string> = {
  ENOENT: "no such file; check the path",
  EISDIR: "it is a directory; give the path of a file",
  ENOTDIR: "a part of the path is not a directory; check the path",
  EACCES: "permission denied; run vgate as a user who may read it, or change the file's mode",
  EPERM: "permission denied; run vgate as a user who may read it, or change the file's mode",
  ELOOP: "too many symbolic links on the way to it; check where the links point",
  ENAMETOOLONG: "the path is too long",
  EMFILE: "vgate has too many files open; raise the open-file limit (ulimit -n)",
  ENFILE: "the system has too many files open; try again later",
};

/** The errno code of a failed system call, when `err` is one. */
function systemCode(err: unknown): string | undefined {
  const e = err as NodeJS.ErrnoException | null;
  return typeof e?.code === "string" && typeof e.syscall === "string" ? e.code : undefined;
}

/** Why a read or open failed: a sentence for the codes users meet, the system's text for others. */
export function fileErrorReason(err: unknown): string {
  const code = systemCode(err);
  if (code && REASONS[code]) return REASONS[code];
  const errno = (err as NodeJS.ErrnoException | null)?.errno;
  const described = typeof errno === "number" ? getSystemErrorMap().get(errno)?.[1] : undefined;
  if (described) return described;
  return err instanceof Error ? err.message : String(err);
}

/** Whether `err` is a failed system call on a file (as opposed to a bug or a parse error). */
export const isFileError = (err: unknown): boolean => systemCode(err) !== undefined;

/** "cannot read --config vcluster.yaml: no such file; check the path" */
export const cannotRead = (what: string, err: unknown): string =>
  `cannot read ${what}: ${fileErrorReason(err)}`;
