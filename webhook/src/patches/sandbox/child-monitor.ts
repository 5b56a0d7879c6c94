// A sandbox child's monitor thread (docs/decisions.md EPS-8). It runs no expression and shares
// nothing with them but the progress record, which it only reads. It blocks reading its pipe to
// the server:
// - each query gets an answer: where the main thread is (state, batch, job, patch) and for how
//   long, which the server uses to time each job of a batch and to name the patch it blames;
// - end of file means the server is gone (exited, killed, crashed): the child then kills itself
//   at once, even while its main thread spins in a loop no interrupt reaches. So a child never
//   outlives its server and never keeps `vgate patch` alive.
// The server does not need this thread to stop a child: it kills the child itself.
import { readSync, writeSync } from "node:fs";
import { workerData } from "node:worker_threads";
import {
  ANSWER_BYTES,
  nowMs,
  P_BATCH,
  P_JOB,
  P_PATCH,
  P_START_F64,
  P_STATE,
  STATE_IDLE,
} from "./protocol.js";

interface MonitorData {
  progress: SharedArrayBuffer;
  fd: number;
}

const { progress, fd } = workerData as MonitorData;
const ints = new Int32Array(progress, 0, 4);
const floats = new Float64Array(progress);
const query = Buffer.alloc(64);
const answer = Buffer.alloc(ANSWER_BYTES);

function die(): never {
  process.kill(process.pid, "SIGKILL");
  throw new Error("unreachable");
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function errorCode(err: unknown): unknown {
  return (err as { code?: unknown }).code;
}

/** Blocks for the next query; 0 at end of file. A non-blocking pipe is polled instead. */
function nextQuery(): number {
  for (;;) {
    try {
      return readSync(fd, query, 0, query.length, null);
    } catch (err) {
      const code = errorCode(err);
      if (code === "EAGAIN") sleep(2);
      else if (code !== "EINTR") return 0;
    }
  }
}

function send(bytes: Buffer): void {
  let at = 0;
  while (at < bytes.length) {
    try {
      at += writeSync(fd, bytes, at, bytes.length - at);
    } catch (err) {
      if (errorCode(err) === "EAGAIN") sleep(1);
      else die();
    }
  }
}

function snapshot(): Buffer {
  const state = Atomics.load(ints, P_STATE);
  answer.writeInt32LE(state, 0);
  answer.writeInt32LE(Atomics.load(ints, P_BATCH), 4);
  answer.writeInt32LE(Atomics.load(ints, P_JOB), 8);
  answer.writeInt32LE(Atomics.load(ints, P_PATCH), 12);
  answer.writeDoubleLE(state === STATE_IDLE ? 0 : nowMs() - floats[P_START_F64]!, 16);
  return answer;
}

for (;;) {
  if (nextQuery() === 0) die();
  send(snapshot());
}
