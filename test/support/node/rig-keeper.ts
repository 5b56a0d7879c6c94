// The node rig's keeper: a process of its own (own process group, so a Ctrl-C to the test run does
// not reach it) that tears the rig in DIR down once its stdin closes, that is, once the test run
// that started the rig has exited or died, SIGKILL included. A rig stopped normally is marked down
// in its state file first, and the keeper then finds nothing to do.
//
//   node rig-keeper.js DIR

import { rmSync } from "node:fs";
import { loadState } from "./teardown.js";
import { teardown } from "./teardown.js";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: rig-keeper.js DIR");
  process.exit(2);
}

let done = false;
async function finish(): Promise<void> {
  if (done) return;
  done = true;
  const state = loadState(dir!);
  if (state && !state.down) {
    // The supervisors of the rig's processes stop them too; teardown kills whatever is left. A
    // failed teardown is tried once more; if that fails too the directory stays, with its state
    // file, so that what is left can be seen (and rig.json says what to undo).
    let failed = false;
    for (let attempt = 0; attempt < 2; attempt++) {
      failed = false;
      await teardown(dir!, 3000).catch((err: unknown) => {
        failed = true;
        console.error(`rig-keeper: teardown of ${dir}: ${(err as Error).message}`);
      });
      if (!failed) break;
    }
    if (failed) process.exit(1);
  }
  rmSync(dir!, { recursive: true, force: true });
  process.exit(0);
}

process.on("SIGINT", () => undefined);
process.on("SIGTERM", () => void finish());
process.stdin.on("end", () => void finish());
process.stdin.on("error", () => void finish());
process.stdin.resume();
