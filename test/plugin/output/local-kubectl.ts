// The real kubectl (of the cluster's version: test/support/kubectl.ts) as an oracle for printing
// one object, without a cluster: `kubectl label --local -f FILE b=2 --overwrite -o FORMAT` reads
// the object, sets a label it already has (so nothing changes) and prints it with kubectl's own
// printers. Objects given here must carry the label b=2.

import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KUBECTL_COMMAND } from "../../support/kubectl.js";

export interface LocalRun {
  code: number;
  stdout: string;
  stderr: string;
}

export const NO_OP_LABEL = { b: "2" };

/** Runs kubectl's printer for `object` with `-o <output>`. */
export function kubectlPrint(object: unknown, output: string): Promise<LocalRun> {
  // U+0085, U+2028 and U+2029 escaped: kubectl reads the file as YAML, where raw ones are breaks.
  const text = JSON.stringify(object).replace(
    /[\u0085\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return kubectlPrintText(text, output);
}

/** Runs kubectl's printer for an object written as `text` (JSON or YAML), with `-o <output>`. */
export function kubectlPrintText(text: string, output: string): Promise<LocalRun> {
  const dir = mkdtempSync(join(tmpdir(), "vgate-print-"));
  const file = join(dir, "object.yaml");
  writeFileSync(file, text);
  return new Promise((resolve) => {
    execFile(
      KUBECTL_COMMAND,
      [
        "label",
        "--local",
        "-f",
        file,
        "b=2",
        "--overwrite",
        "--kubeconfig",
        "/dev/null",
        "-o",
        output,
      ],
      { timeout: 30_000 },
      (err, stdout, stderr) => {
        rmSync(dir, { recursive: true, force: true });
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}
