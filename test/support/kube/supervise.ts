// Runs one test-rig process (etcd, kube-apiserver, vgate) so that it can never outlive the test
// run that started it, even when that run is killed with SIGKILL:
//
//   node supervise.js [--log FILE] [--remove DIR] -- COMMAND ARGS...
//
// The parent holds this process's stdin open. When stdin closes (the parent stopped it, exited or
// died) or a SIGTERM/SIGINT arrives, the command gets SIGTERM, then SIGKILL after the grace
// period, and DIR is removed. When the command exits on its own, this exits with its status, and
// first prints how it ended and its log's last lines on stderr: the log may be in DIR, and the
// test that waited for the command finds it gone.

import { spawn } from "node:child_process";
import { createWriteStream, readFileSync, rmSync } from "node:fs";
import { basename } from "node:path";
import { parseArgs } from "node:util";

const GRACE_MS = Number(process.env["VGATE_SUPERVISE_GRACE_MS"] ?? 3000);

const { values, positionals } = parseArgs({
  options: { log: { type: "string" }, remove: { type: "string" } },
  allowPositionals: true,
});
const [command, ...args] = positionals;
if (!command) {
  console.error("usage: supervise.js [--log FILE] [--remove DIR] -- COMMAND ARGS...");
  process.exit(2);
}

const log = values.log ? createWriteStream(values.log, { flags: "a" }) : null;
const child = spawn(command, args, {
  stdio: ["ignore", log ? "pipe" : "inherit", log ? "pipe" : "inherit"],
});
if (log) {
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
}

let stopping = false;
function cleanUp(): void {
  if (values.remove) rmSync(values.remove, { recursive: true, force: true });
}

function stop(): void {
  if (stopping) return;
  stopping = true;
  if (child.exitCode !== null || child.signalCode !== null) return finish(0);
  child.kill("SIGTERM");
  setTimeout(() => child.kill("SIGKILL"), GRACE_MS).unref();
}

function finish(code: number, how?: string): void {
  const done = () => {
    if (how) report(how);
    cleanUp();
    process.exit(code);
  };
  if (log) log.end(done);
  else done();
}

/** How the command ended on its own, and the end of its log (stderr is the test run's). */
function report(how: string): void {
  let tail = "";
  try {
    tail = readFileSync(values.log!, "utf8").trimEnd().split("\n").slice(-20).join("\n");
  } catch {
    // No log file, or it could not be read: the status alone.
  }
  console.error(`supervise: ${basename(command!)} ${how}${tail ? `; its log ends:\n${tail}` : ""}`);
}

child.on("error", (err) => {
  console.error(`supervise: cannot start ${command}: ${err.message}`);
  finish(127);
});
child.on("exit", (code, signal) => {
  if (stopping) return finish(0);
  finish(code ?? (signal ? 128 : 1), signal ? `was killed by ${signal}` : `exited with ${code}`);
});
process.stdin.on("end", stop);
process.stdin.on("error", stop);
process.stdin.resume();
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
