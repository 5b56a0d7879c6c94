// kubectl accesskey describe's Events section, through kubectl's plugin discovery against the real
// kube-apiserver of the test rig, next to `kubectl describe ownedaccesskey NAME` on the same key:
// Events recorded as vgate records them (in `default`, involvedObject kind/apiVersion/name/uid),
// one of them seen twice, shown line for line as kubectl shows them; `<none>` without Events;
// no section with --show-events=false; a user who may not list Events still gets the rest, as
// kubectl does; and an Event's hostile message escaped for the terminal.

import assert from "node:assert/strict";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON } from "../support/kubectl.js";
import { role, roleBindingToUser, waitForAccess } from "../support/kube/rbac.js";
import { pluginCluster, RUN_ID, type PluginCluster } from "./plugin-cluster.js";
import { kubectl, withoutAges, type Run } from "./plugin-run.js";

const RESOURCE = "ownedaccesskeys.management.loft.sh";
const why = KUBE_SKIP_REASON || KUBECTL_SKIP_REASON;

const HOUR = 3_600_000;
const wire = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** The lines from "Events:" to the end. */
function eventsSection(stdout: string): string[] {
  const lines = stdout.trimEnd().split("\n");
  const at = lines.findIndex((l) => l.startsWith("Events:"));
  return at < 0 ? [] : lines.slice(at);
}

(HAVE_KUBE && HAVE_KUBECTL ? describe : describe.skip)(
  `kubectl accesskey describe: the key's Events, as kubectl describe shows them${why}`,
  function () {
    this.timeout(90_000);
    let env: PluginCluster;
    let pat: string;
    let rue: string;
    const patName = `pat-ev-${RUN_ID}`;
    const rueName = `rue-ev-${RUN_ID}`;
    const made: string[] = [];
    const events: string[] = [];
    const both = async (kubeconfig: string, name: string, flags: string[] = []) => {
      const ours = await kubectl(["accesskey", "describe", name, ...flags], { kubeconfig });
      const theirs = await kubectl(["describe", RESOURCE, name, ...flags], { kubeconfig });
      assert.equal(ours.code, 0, ours.stderr);
      assert.equal(theirs.code, 0, theirs.stderr);
      return { ours, theirs };
    };
    const makeKey = async (base: string): Promise<{ name: string; uid: string }> => {
      const name = `${base}-${RUN_ID}`;
      made.push(name);
      const r: Run = await kubectl(["accesskey", "create", name, "--ttl", "30d"], {
        kubeconfig: pat,
      });
      assert.equal(r.code, 0, r.stderr);
      const key = await env.cluster.admin.get({
        apiVersion: `${env.cluster.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name },
      });
      const uid = key?.metadata["uid"];
      assert.ok(typeof uid === "string", name);
      return { name, uid };
    };
    /** An Event on the key as vgate serve records it (event-recorder.ts), in `default`. */
    const record = async (
      key: { name: string; uid: string },
      eventName: string,
      fields: Record<string, unknown>,
    ) => {
      events.push(eventName);
      await env.cluster.admin.create({
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: eventName, namespace: "default" },
        involvedObject: {
          apiVersion: `${env.cluster.group}/v1`,
          kind: "OwnedAccessKey",
          name: key.name,
          uid: key.uid,
        },
        type: "Warning",
        reason: "AccessKeyExpiring",
        source: { component: "vgate", host: "vgate-0" },
        reportingComponent: "vgate",
        reportingInstance: "vgate-0",
        ...fields,
      });
    };

    before(async function () {
      this.timeout(120_000);
      env = await pluginCluster();
      pat = await env.userKubeconfig(patName);
      rue = await env.userKubeconfig(rueName);
      // rue may list Events in `default` only, where a key's Events are; not in all namespaces.
      const rules = [{ apiGroups: [""], resources: ["events"], verbs: ["list"] }];
      await env.cluster.admin.apply(role(`events-${RUN_ID}`, "default", rules));
      await env.cluster.admin.apply(
        roleBindingToUser(`events-${RUN_ID}`, "default", `events-${RUN_ID}`, rueName),
      );
      const access = { user: rueName, resourceAttributes: { resource: "events", verb: "list" } };
      await waitForAccess(
        env.cluster.admin,
        { ...access, resourceAttributes: { ...access.resourceAttributes, namespace: "default" } },
        true,
      );
    });
    after(async () => {
      if (!env) return;
      await env.cleanup(made);
      for (const name of events) {
        await env.cluster.admin
          .delete({ apiVersion: "v1", kind: "Event", metadata: { name, namespace: "default" } })
          .catch(() => undefined);
      }
    });

    it("shows the Events table line for line as kubectl describe, oldest first", async () => {
      const key = await makeKey("evkey");
      const now = Date.now();
      // Ages in whole hours (8h to 48h prints as "Nh"), half an hour from the next tick, so that
      // both describes see the same ones. The older Event has the later name: the list gives it
      // second, the sort on lastTimestamp first.
      await record(key, `a-${key.name}.twice`, {
        message: "Access key expires in 1d (at 2026-12-01T00:00:00Z); rotate it or raise spec.ttl",
        firstTimestamp: wire(now - 20.5 * HOUR),
        lastTimestamp: wire(now - 9.5 * HOUR),
        count: 2,
      });
      await record(key, `b-${key.name}.once`, {
        message: "  Access key expires in 6d23h (at 2026-12-06T00:00:00Z); rotate it  ",
        firstTimestamp: wire(now - 10.5 * HOUR),
        lastTimestamp: wire(now - 10.5 * HOUR),
        count: 1,
      });
      await record(key, `c-${key.name}.other`, {
        type: "Normal",
        reason: "Rotated",
        source: {},
        reportingComponent: "vgate-rotator",
        involvedObject: {
          apiVersion: `${env.cluster.group}/v1`,
          kind: "OwnedAccessKey",
          name: key.name,
          uid: key.uid,
          fieldPath: "spec.key",
        },
        message: "a new key was set",
        firstTimestamp: wire(now - 8.5 * HOUR),
        lastTimestamp: wire(now - 8.5 * HOUR),
        count: 1,
      });
      // Another key's Event, and one with the key's name but another uid (a deleted namesake's).
      await record(
        { name: key.name, uid: "00000000-0000-0000-0000-000000000000" },
        `d-${key.name}.old`,
        {
          message: "a namesake's",
          firstTimestamp: wire(now - 9 * HOUR),
          lastTimestamp: wire(now - 9 * HOUR),
          count: 1,
        },
      );

      const { ours, theirs } = await both(env.admin, key.name);
      const section = eventsSection(ours.stdout);
      assert.deepEqual(
        section,
        eventsSection(theirs.stdout),
        `${ours.stdout}\n---\n${theirs.stdout}`,
      );
      assert.deepEqual(
        section.map((l) => l.split(/ {2,}/)),
        [
          ["Events:"],
          ["", "Type", "Reason", "Age", "From", "Message"],
          ["", "----", "------", "----", "----", "-------"],
          [
            "",
            "Warning",
            "AccessKeyExpiring",
            "10h",
            "vgate",
            "Access key expires in 6d23h (at 2026-12-06T00:00:00Z); rotate it",
          ],
          [
            "",
            "Warning",
            "AccessKeyExpiring",
            "9h (x2 over 20h)",
            "vgate",
            "Access key expires in 1d (at 2026-12-01T00:00:00Z); rotate it or raise spec.ttl",
          ],
          ["", "Normal", "Rotated", "8h", "vgate-rotator", "spec.key: a new key was set"],
        ],
      );
      // The section ends the describe, after the key's own fields.
      assert.match(ours.stdout, /^Status: +Active\n[\s\S]*\nEvents:\n/m);

      // Without the section, as kubectl's --show-events=false.
      const off = await both(env.admin, key.name, ["--show-events=false"]);
      assert.doesNotMatch(off.ours.stdout, /^Events:/m);
      assert.doesNotMatch(off.theirs.stdout, /^Events:/m);
      // The same fields before the section; the two runs may fall in different seconds, so the
      // relative ages ("(0s ago)", "(in 29d)") are left out of the comparison.
      assert.equal(
        withoutAges(off.ours.stdout),
        withoutAges(ours.stdout.slice(0, ours.stdout.indexOf("Events:"))),
      );

      // rue may list Events in `default` only: kubectl, searching all namespaces, is refused and
      // shows <none>; the plugin then looks where a key's Events are recorded.
      const r = await both(rue, key.name);
      assert.deepEqual(
        eventsSection(r.theirs.stdout).map((l) => l.split(/\s+/)),
        [["Events:", "<none>"]],
      );
      assert.deepEqual(eventsSection(r.ours.stdout), section);
    });

    it("<none> without Events or without leave to list them, as kubectl; hostile text escaped", async () => {
      const key = await makeKey("evnone");
      const admin = await both(env.admin, key.name);
      assert.deepEqual(
        eventsSection(admin.ours.stdout).map((l) => l.split(/\s+/)),
        [["Events:", "<none>"]],
      );
      assert.deepEqual(
        eventsSection(admin.theirs.stdout).map((l) => l.split(/\s+/)),
        eventsSection(admin.ours.stdout).map((l) => l.split(/\s+/)),
      );

      const now = Date.now();
      await record(key, `${key.name}.hostile`, {
        message: "\x1b]0;owned\x07\x1b[2J\u202Eevil\nsecond line\r",
        reason: "Access\x1b[31mKeyExpiring",
        firstTimestamp: wire(now - 20.5 * HOUR),
        lastTimestamp: wire(now - 20.5 * HOUR),
        count: 1,
      });
      // pat owns the key but may not list Events anywhere: the describe, with <none>, as kubectl.
      const owner = await both(pat, key.name);
      assert.deepEqual(
        eventsSection(owner.ours.stdout).map((l) => l.split(/\s+/)),
        [["Events:", "<none>"]],
      );
      assert.deepEqual(
        eventsSection(owner.theirs.stdout).map((l) => l.split(/\s+/)),
        [["Events:", "<none>"]],
      );
      assert.match(owner.ours.stdout, new RegExp(`^Name: +${key.name}$`, "m"));
      assert.equal(owner.ours.stderr, "");

      const shown = await both(env.admin, key.name);
      const section = eventsSection(shown.ours.stdout);
      assert.equal(section.length, 4, shown.ours.stdout);
      assert.deepEqual(section[3]?.split(/ {2,}/), [
        "",
        "Warning",
        "Access^[[31mKeyExpiring",
        "20h",
        "vgate",
        "^[]0;owned\\a^[[2J\\u202eevil\\nsecond line",
      ]);
      // eslint-disable-next-line no-control-regex -- no control character may reach the terminal
      assert.doesNotMatch(shown.ours.stdout, /[\x00-\x08\x0b-\x1f\x7f\u202e]/);
    });
  },
);
