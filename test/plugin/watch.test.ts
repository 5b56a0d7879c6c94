// list -w and get -w as a subprocess against the real kube-apiserver of the test rig: the keys as
// they are, then one entry per change, the header once, the key never; the watch ends when the
// server ends it after --request-timeout (as kubectl's does), with exit code 0.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { HAVE_KUBECTL } from "../support/kubectl.js";
import { pluginCluster, RUN_ID, type PluginCluster } from "./plugin-cluster.js";
import { kubectl, plugin, pluginEnv, PLUGIN, type Run } from "./plugin-run.js";

const KIND = "ownedaccesskey.management.loft.sh";
/**
 * For kubectl get: the short name oak warns on stderr when a test running alongside has made
 * another group's OwnedAccessKey CRD, and stderr is compared here.
 */
const RESOURCE = "ownedaccesskeys.management.loft.sh";

/** The plugin running, its output so far, and a way to wait until the output shows something. */
function started(args: string[], kubeconfig: string) {
  const child = spawn(PLUGIN, args, { env: pluginEnv({ kubeconfig }) });
  let stdout = "";
  let stderr = "";
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  child.stdout.on("data", (d: Buffer) => ((stdout += d.toString()), wake()));
  child.stderr.on("data", (d: Buffer) => ((stderr += d.toString()), wake()));
  const exited = new Promise<Run>((done) =>
    child.on("close", (code) => done({ code: code ?? 1, stdout, stderr })),
  );
  const until = async (test: (out: string) => boolean, what: string) => {
    const deadline = Date.now() + 20_000;
    while (!test(stdout)) {
      if (Date.now() > deadline)
        throw new Error(`no ${what} in ${JSON.stringify(stdout + stderr)}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };
  return { exited, until, kill: () => child.kill() };
}

(HAVE_KUBE ? describe : describe.skip)(
  `kubectl accesskey list -w / get -w on a real cluster${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let env: PluginCluster;
    let wendy: string;
    const wendyName = `wendy-${RUN_ID}`;
    const made: string[] = [];
    const name = (base: string) => {
      const n = `${base}-${wendyName}`;
      made.push(n);
      return n;
    };
    const asWendy = (args: string[]): Promise<Run> => plugin(args, { kubeconfig: wendy });

    before(async function () {
      this.timeout(120_000);
      env = await pluginCluster();
      wendy = await env.userKubeconfig(wendyName);
    });
    after(async () => env && (await env.cleanup(made)));

    it("list -w: the table, then a row per change without the header, never the key; ends with --request-timeout", async () => {
      const first = name("w1");
      const second = name("w2");
      const made1 = await asWendy(["create", first]);
      assert.equal(made1.code, 0, made1.stderr);
      const w = started(["list", "-w", "--request-timeout", "8s"], wendy);
      await w.until((out) => out.includes(`${first} `), "initial row");
      const made2 = await asWendy(["create", second]);
      assert.equal(made2.code, 0, made2.stderr);
      await w.until((out) => out.includes(`${second} `), "row of the new key");
      assert.equal((await asWendy(["disable", first])).code, 0);
      await w.until((out) => /Disabled/.test(out), "row of the disabled key");
      assert.equal((await asWendy(["delete", second])).code, 0);
      const r = await w.exited;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, "");
      const lines = r.stdout.trimEnd().split("\n");
      assert.match(lines[0]!, /^NAME +DISPLAY NAME +OWNER /);
      assert.equal(lines.filter((l) => l.startsWith("NAME ")).length, 1, "one header");
      assert.match(lines[1]!, new RegExp(`^${first} +.* Active `));
      assert.equal(lines.length - 1, 1 + lines.slice(2).length);
      // After the table: the new key, the disabled one, the deleted one (and nothing before).
      const changed = lines.slice(2).map((l) => l.split(/ +/)[0]);
      assert.equal(changed[0], second);
      assert.ok(changed.includes(first), r.stdout);
      assert.ok(changed.lastIndexOf(second) > changed.indexOf(first), r.stdout);
      for (const key of [made1.stdout.trim(), made2.stdout.trim()])
        assert.ok(!r.stdout.includes(key), "no key in a watch");
    });

    it("get NAME -w -o yaml: the key, then each change as its own document, masked", async () => {
      const n = name("w3");
      const made3 = await asWendy(["create", n]);
      assert.equal(made3.code, 0, made3.stderr);
      const w = started(["get", n, "-w", "-o", "yaml", "--request-timeout", "5s"], wendy);
      await w.until((out) => out.includes(`name: ${n}`), "the key");
      assert.equal((await asWendy(["annotate", n, "example.com/step=one"])).code, 0);
      const r = await w.exited;
      assert.equal(r.code, 0, r.stderr);
      // Two documents: the watch's first event (the key as it was) is not printed again.
      const docs = r.stdout.split("---\n");
      assert.equal(docs.length, 2, r.stdout);
      assert.ok(!docs[0]!.includes("example.com/step"));
      assert.ok(docs[1]!.includes("example.com/step: one"), docs[1]);
      for (const doc of docs) assert.ok(doc.includes("  key: REDACTED\n"), doc);
      assert.ok(!r.stdout.includes(made3.stdout.trim()));
    });

    it("get -w --watch-only -o name: only the changes; two names are refused as kubectl does", async () => {
      const n = name("w4");
      assert.equal((await asWendy(["create", n])).code, 0);
      const w = started(["get", n, "--watch-only", "-o", "name", "--request-timeout", "4s"], wendy);
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal((await asWendy(["annotate", n, "example.com/x=y"])).code, 0);
      const r = await w.exited;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${KIND}/${n}\n`);
      const two = await asWendy(["get", n, n, "-w"]);
      assert.equal(two.code, 1);
      assert.equal(
        two.stderr,
        "error: watch is only supported on individual resources and resource collections, but 2 resources were found\n",
      );
    });

    (HAVE_KUBECTL ? it : it.skip)(
      "--output-watch-events: what kubectl get -w --output-watch-events prints, through kubectl",
      async () => {
        const n = name("w6");
        assert.equal((await asWendy(["create", n])).code, 0);
        const mine = (args: string[]) =>
          kubectl(["accesskey", "get", n, ...args], { kubeconfig: wendy });
        const theirs = (args: string[]) =>
          kubectl(["get", RESOURCE, n, ...args], { kubeconfig: wendy });
        const flags = ["-w", "--output-watch-events", "--request-timeout", "4s"];
        // Both watch one change; --show-key, so that the objects are the same bytes.
        for (const output of [
          ["-o", "json", "--show-key"],
          ["-o", "yaml", "--show-key"],
          ["-o", "name"],
          [],
        ]) {
          const both = Promise.all([
            mine([...flags, ...output]),
            theirs([...flags, ...output.filter((o) => o !== "--show-key")]),
          ]);
          await new Promise((r) => setTimeout(r, 1500));
          const annotated = await asWendy([
            "annotate",
            n,
            `example.com/step-${output.length}${output[1] ?? ""}=x`,
          ]);
          assert.equal(annotated.code, 0, annotated.stderr);
          const [a, b] = await both;
          assert.equal(a.code, 0, a.stderr);
          assert.equal(b.code, 0, b.stderr);
          if (output.length > 0) {
            assert.equal(a.stdout, b.stdout, output.join(" "));
            continue;
          }
          // The table: our columns, kubectl's EVENT column (its values, padding and place).
          const event = (out: string) =>
            out.split("\n").map((l) => l.slice(0, out.indexOf("NAME") + 4));
          assert.deepEqual(event(a.stdout), event(b.stdout));
          assert.match(a.stdout, /^EVENT {6}NAME +DISPLAY NAME +OWNER /);
          assert.match(a.stdout, /\nADDED {6}\S.*\nMODIFIED {3}\S/);
        }
        const json = await mine([...flags.slice(1), "-o", "json"]);
        const theirsJson = await theirs([...flags.slice(1), "-o", "json"]);
        assert.deepEqual([json.code, json.stderr], [theirsJson.code, theirsJson.stderr]);
        // Without --show-key, the key is masked in the event's object as everywhere.
        const masked = await mine([
          "-w",
          "--output-watch-events",
          "--request-timeout",
          "1s",
          "-o",
          "json",
        ]);
        const event = JSON.parse(masked.stdout) as {
          type: string;
          object: { spec: { key: string } };
        };
        assert.equal(event.type, "ADDED");
        assert.equal(event.object.spec.key, "REDACTED");
      },
    );

    (HAVE_KUBECTL ? it : it.skip)(
      "through kubectl: kubectl accesskey list -w ends as kubectl get -w does",
      async () => {
        const n = name("w5");
        assert.equal((await asWendy(["create", n])).code, 0);
        const mine = await kubectl(["accesskey", "list", "-w", "--request-timeout", "2s"], {
          kubeconfig: wendy,
        });
        const theirs = await kubectl(
          [
            "get",
            RESOURCE,
            "-w",
            "--request-timeout",
            "2s",
            "--field-selector",
            `spec.user=${wendyName}`,
          ],
          { kubeconfig: wendy },
        );
        assert.equal(mine.code, theirs.code, `${mine.stderr} / ${theirs.stderr}`);
        assert.equal(mine.stderr, theirs.stderr);
        assert.match(mine.stdout, new RegExp(`^NAME .*\\n(.*\\n)*${n} `));
        // The keys as they are, aligned as one table.
        // Nothing to show: what kubectl get -w says (on stderr) and prints.
        const none = ["-l", `none=${RUN_ID}`, "-w", "--request-timeout", "2s"];
        const mineEmpty = await kubectl(["accesskey", "list", ...none], { kubeconfig: wendy });
        const theirsEmpty = await kubectl(["get", RESOURCE, ...none], { kubeconfig: wendy });
        assert.deepEqual(
          [mineEmpty.code, mineEmpty.stdout, mineEmpty.stderr],
          [theirsEmpty.code, theirsEmpty.stdout, theirsEmpty.stderr],
        );
        const [header, ...rows] = mine.stdout.trimEnd().split("\n");
        const expires = header!.indexOf("EXPIRES");
        for (const row of rows) assert.match(row.slice(expires), /^<never> /, mine.stdout);
      },
    );
  },
);
