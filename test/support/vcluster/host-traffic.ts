// Real traffic on the node rig's host: httpd pods that answer with a body of their own, and a client
// pod that GETs addresses and reports each answer, so a test sees which backend a Service routed to.

import assert from "node:assert/strict";
import type { KubeObject } from "../kube/kube-client.js";
import type { NodeRig } from "../node/node-rig.js";
import { untilValue } from "../until.js";

type Pod = KubeObject & { status?: { phase?: string; podIP?: string } };

const podRef = (name: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default" },
});

/** A host pod in `default` that answers GET / on port 8080 with `body`, ready once it does. */
export function httpdPod(name: string, body: string, image: string): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default", labels: { app: name } },
    spec: {
      containers: [
        {
          name: "httpd",
          image,
          imagePullPolicy: "Never",
          command: [
            "sh",
            "-c",
            `mkdir -p /www && echo ${body} > /www/index.html && exec httpd -f -p 8080 -h /www`,
          ],
          readinessProbe: { httpGet: { path: "/", port: 8080 }, periodSeconds: 1 },
        },
      ],
    },
  };
}

/** The IP of the host pod `default/name`, once it runs. */
export async function runningPodIp(rig: NodeRig, name: string): Promise<string> {
  const pod = await untilValue(
    `the host pod ${name} running`,
    () => rig.admin.get<Pod>(podRef(name)),
    (p) => p?.status?.phase === "Running" && Boolean(p.status.podIP),
  );
  return pod!.status!.podIP!;
}

/**
 * Runs a client pod on the host that GETs each `address port` of `targets` `times` times; one line
 * per answer: its body, or FAILED. (busybox's nc, as its wget needs the C library's resolver, which
 * a static busybox in an image with nothing else cannot load.)
 */
export async function hostClient(
  rig: NodeRig,
  image: string,
  name: string,
  targets: readonly string[],
  times: number,
): Promise<string[]> {
  const get = (t: string) =>
    `b=$(printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${t} | tail -n 1); echo "\${b:-FAILED}"`;
  const loop = targets.map((t) => `for i in $(seq 1 ${times}); do ${get(t)}; done`).join("; ");
  await rig.admin.create<Pod>({
    ...podRef(name),
    spec: {
      restartPolicy: "Never",
      containers: [
        { name: "client", image, imagePullPolicy: "Never", command: ["sh", "-c", loop] },
      ],
    },
  });
  await untilValue(
    `the client pod ${name} done`,
    () => rig.admin.get<Pod>(podRef(name)),
    (p) => p?.status?.phase === "Succeeded" || p?.status?.phase === "Failed",
  );
  const logs = await rig.kubectl(["-n", "default", "logs", name]);
  assert.equal(logs.code, 0, logs.stderr);
  return logs.stdout.trim().split("\n");
}

/** How many lines of `lines` are each value, as `value×count`, most first. */
export function tally(lines: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([value, n]) => `${value}×${n}`)
    .join(", ");
}
