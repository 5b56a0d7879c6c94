// Starts a node rig in a process of its own and prints one JSON line ({dir, netnsInode, cgroup,
// netns}) once it is up, with a pod running; then waits to be killed. The teardown test SIGKILLs
// it to check that the keeper leaves the host as it was.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startNodeRig } from "./node-rig.js";
import { rigImages } from "./images.js";

const images = rigImages();
if (!("found" in images)) {
  console.error(images.missing);
  process.exit(2);
}
const rig = await startNodeRig({ pause: images.found.pause, images: [images.found.test] });
const run = await rig.kubectl([
  "run",
  "sleeper",
  `--image=${images.found.test.ref}`,
  "--image-pull-policy=Never",
  "--restart=Never",
  "--command",
  "--",
  "sleep",
  "3600",
]);
if (run.code !== 0) throw new Error(run.stderr);
for (let i = 0; ; i++) {
  const phase = await rig.kubectl(["get", "pod", "sleeper", "-o", "jsonpath={.status.phase}"]);
  if (phase.stdout === "Running") break;
  if (i > 240) throw new Error(`pod sleeper: ${phase.stdout} ${phase.stderr}`);
  await new Promise((r) => setTimeout(r, 250));
}
const state = JSON.parse(readFileSync(join(rig.dir, "rig.json"), "utf8")) as Record<
  string,
  unknown
>;
console.log(
  JSON.stringify({
    dir: rig.dir,
    netnsInode: state["netnsInode"],
    cgroup: state["cgroup"],
    netns: rig.netns,
  }),
);
setInterval(() => undefined, 1 << 30);
