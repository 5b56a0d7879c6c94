// Loaded into the soak's `vgate serve` only (NODE_OPTIONS=--import, see soak.ts), never shipped:
// every VGATE_SOAK_GC_MS it runs a full garbage collection and appends what is still alive after it
// to VGATE_SOAK_HEAP_LOG, one JSON line per collection. That post-GC floor is what a leak raises
// and garbage does not; RSS is a poor witness, since V8 and malloc keep freed pages for a while.
// VGATE_SOAK_LEAK_BYTES (for the test that shows the check can fail) keeps that many bytes of V8
// heap for every HTTPS request the process serves: a deliberate leak, made from outside the product.
import { appendFileSync } from "node:fs";
import { Server } from "node:https";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** The sample each line holds, in bytes; `t` is milliseconds since the epoch. */
export interface HeapFloorSample {
  t: number;
  heapUsed: number;
  external: number;
  rss: number;
}

const log = process.env["VGATE_SOAK_HEAP_LOG"];
const everyMs = Number(process.env["VGATE_SOAK_GC_MS"] ?? "1000");
const leakBytes = Number(process.env["VGATE_SOAK_LEAK_BYTES"] ?? "0");
// The supervisor that starts vgate inherits NODE_OPTIONS too: only vgate itself is measured.
const isVgate = /webhook\/bin\/vgate$/.test(process.argv[1] ?? "");

if (isVgate && log !== undefined && everyMs > 0) {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const sample = (): void => {
    gc();
    const m = process.memoryUsage();
    const line: HeapFloorSample = {
      t: Date.now(),
      heapUsed: m.heapUsed,
      external: m.external,
      rss: m.rss,
    };
    appendFileSync(log, `${JSON.stringify(line)}\n`);
  };
  sample();
  setInterval(sample, everyMs).unref();
}

if (isVgate && leakBytes > 0) {
  const kept: number[][] = [];
  type Emit = (this: Server, event: string | symbol, ...args: unknown[]) => boolean;
  const emit = Server.prototype.emit as Emit;
  // A request event is the one place every HTTPS request passes, whatever the product does with it.
  const leaky: Emit = function (event, ...args) {
    if (event === "request") kept.push(new Array<number>(Math.ceil(leakBytes / 8)).fill(1.5));
    return emit.call(this, event, ...args);
  };
  Server.prototype.emit = leaky as typeof Server.prototype.emit;
}
