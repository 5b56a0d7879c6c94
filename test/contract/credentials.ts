// Access keys as credentials, the whole loop as a CI pipeline lives it: a key made with
// `kubectl accesskey create`, used as a bearer token by kubectl and by client-node, allowed inside
// its scope and denied outside it (by vgate's authorization webhook), refused once disabled or
// expired (by vgate's token webhook), with its groups applied and `whoami` naming it. The API
// server must be wired with manifests/apiserver/ (the test rig is; a real cluster says so with
// VGATE_E2E_AUTH=1).

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { plugin, type Run } from "../plugin/plugin-run.js";
import { httpsRequest } from "../support/https-client.js";
import {
  HAVE_ANY_KUBECTL,
  ANY_KUBECTL_SKIP_REASON,
  kubectlFor,
  type Kubectl,
} from "../support/kubectl.js";
import { until } from "../support/until.js";
import type { Contract } from "./contract.js";

const PROJECT_LABEL = "loft.sh/project";

/** What a key login looks like from outside: a kubeconfig with the key, kubectl bound to it. */
interface KeyLogin {
  name: string;
  key: string;
  kubeconfig: string;
  kubectl: Kubectl;
  /** client-node's CoreV1Api with the key as bearer token. */
  core(): CoreV1Api;
}

export function credentialsTests(contract: Contract): void {
  let dir = "";
  let admin: Kubectl;
  const runId = (): string => contract.cluster.runId;
  const alice = (): string => contract.user("key-alice");
  const ns = (which: "in" | "out"): string => `key-${which}-${runId()}`;
  const project = (): string => `proj-${runId()}`;

  before(async function () {
    if (!HAVE_ANY_KUBECTL) this.skip();
    dir = await mkdtemp(join(tmpdir(), "vgate-credentials-"));
    admin = contract.kubectl;
    // Two namespaces, one in the key's project; alice may list pods in both (RBAC), so only the
    // key's scope can tell them apart. (No controller-manager runs here to aggregate the built-in
    // "view" role, so the test brings its own.)
    await must(
      admin([
        "create",
        "clusterrole",
        `pod-reader-${runId()}`,
        "--verb=get,list,watch",
        "--resource=pods",
      ]),
    );
    for (const which of ["in", "out"] as const) {
      const labels = which === "in" ? `${PROJECT_LABEL}=${project()}` : `${PROJECT_LABEL}=other`;
      await must(admin(["create", "namespace", ns(which)]));
      await must(admin(["label", "namespace", ns(which), labels]));
      await must(
        admin([
          "create",
          "rolebinding",
          "pod-readers",
          "-n",
          ns(which),
          `--clusterrole=pod-reader-${runId()}`,
          `--user=${alice()}`,
          "--group=key-ci-bots",
        ]),
      );
    }
    // alice manages her own keys (vgate's ownership rules keep her to them).
    await must(
      admin([
        "create",
        "clusterrole",
        `key-owner-${runId()}`,
        "--verb=get,list,watch,create,update,patch,delete",
        `--resource=ownedaccesskeys.${contract.group}`,
      ]),
    );
    await must(
      admin([
        "create",
        "clusterrolebinding",
        `key-owner-${runId()}`,
        `--clusterrole=key-owner-${runId()}`,
        `--user=${alice()}`,
      ]),
    );
    // The group a key adds may list namespaces; alice herself may not.
    await must(
      admin([
        "create",
        "clusterrole",
        `ns-lister-${runId()}`,
        "--verb=get,list",
        "--resource=namespaces",
      ]),
    );
    await must(
      admin([
        "create",
        "clusterrolebinding",
        `ns-lister-${runId()}`,
        `--clusterrole=ns-lister-${runId()}`,
        "--group=key-ci-bots",
      ]),
    );
  });

  after(async () => {
    if (!dir) return;
    for (const which of ["in", "out"] as const) {
      await admin(["delete", "namespace", ns(which), "--wait=false"]);
    }
    for (const role of [`ns-lister-${runId()}`, `key-owner-${runId()}`]) {
      await admin(["delete", "clusterrolebinding,clusterrole", role]);
    }
    await admin(["delete", "clusterrole", `pod-reader-${runId()}`]);
    await rm(dir, { recursive: true, force: true });
  });

  /** `kubectl accesskey create NAME ARGS` as alice (impersonated by the admin), then a login. */
  async function createKey(args: readonly string[], as = ["--as", alice()]): Promise<KeyLogin> {
    const name = contract.name("cred");
    const created = await pluginAsAdmin(["create", name, ...as, ...args]);
    assert.equal(created.code, 0, created.stderr);
    const key = created.stdout.trim();
    assert.match(key, /^[A-Za-z0-9_-]{43,}$/, "create prints the key, and only the key");
    contract.cleanup.add(async () => {
      await pluginAsAdmin(["delete", name]);
    });
    return login(key, name);
  }

  function pluginAsAdmin(args: readonly string[]): Promise<Run> {
    return plugin(args, { kubeconfig: contract.cluster.kubeconfigPath });
  }

  /** A kubeconfig made by `kubectl accesskey kubeconfig --key-file -`, as a pipeline makes one. */
  async function login(key: string, name: string): Promise<KeyLogin> {
    const made = await plugin(["kubeconfig", name, "--key-file", "-"], {
      kubeconfig: contract.cluster.kubeconfigPath,
      input: `${key}\n`,
    });
    assert.equal(made.code, 0, made.stderr);
    assert.ok(!made.stderr.includes(key), "the key is never echoed on stderr");
    const kubeconfig = join(dir, `${name}.kubeconfig`);
    await writeFile(kubeconfig, made.stdout, { mode: 0o600 });
    const cache = await mkdtemp(join(dir, "cache-"));
    return {
      name,
      key,
      kubeconfig,
      kubectl: kubectlFor(kubeconfig, cache),
      core: () => {
        const kc = new KubeConfig();
        kc.loadFromFile(kubeconfig);
        return kc.makeApiClient(CoreV1Api);
      },
    };
  }

  it(`kubectl and client-node log in with a key, inside its scope only${ANY_KUBECTL_SKIP_REASON}`, async () => {
    const k = await createKey(["--project", project()]);
    // kubectl: allowed inside the project (RBAC allows, vgate has no opinion) ...
    const inside = await k.kubectl(["get", "pods", "-n", ns("in")]);
    assert.equal(inside.code, 0, inside.stderr);
    // ... and denied outside it, although RBAC alone would allow it.
    const outside = await k.kubectl(["get", "pods", "-n", ns("out")]);
    assert.equal(outside.code, 1);
    assert.match(outside.stderr, /Error from server \(Forbidden\)/);
    assert.match(outside.stderr, new RegExp(`User "${alice()}" cannot list resource "pods"`));
    assert.match(outside.stderr, /outside the key's scope/);
    // client-node, with the same key as a bearer token.
    const pods = await k.core().listNamespacedPod({ namespace: ns("in") });
    assert.deepEqual(pods.items, []);
    await assert.rejects(k.core().listNamespacedPod({ namespace: ns("out") }), (err: unknown) => {
      assert.equal((err as { code?: number }).code, 403);
      return true;
    });
    // The key never widens: alice may not list namespaces, with or without a key.
    const namespaces = await k.kubectl(["get", "namespaces"]);
    assert.equal(namespaces.code, 1);
    assert.match(namespaces.stderr, /Forbidden/);
  });

  /**
   * kube-apiserver keeps a successful TokenReview for at least 10 s (a fixed cache, besides the
   * webhook's own TTL), so a key that stops working is first refused by vgate's authorization
   * webhook (403, with vgate's reason), then by authentication (401) once that cache runs out.
   */
  async function refusedThen401(k: KeyLogin, reason: RegExp, within: number): Promise<void> {
    const get = () => k.kubectl(["get", "pods", "-n", ns("in")]);
    await until(
      async () => {
        const run = await get();
        return run.code === 1 && (reason.test(run.stderr) || /Unauthorized/.test(run.stderr));
      },
      "the key is refused",
      within,
    );
    await until(
      async () => /You must be logged in to the server \(Unauthorized\)/.test((await get()).stderr),
      "the key gets 401",
      20_000,
    );
    await assert.rejects(k.core().listNamespacedPod({ namespace: ns("in") }), (err: unknown) => {
      assert.equal((err as { code?: number }).code, 401);
      return true;
    });
  }

  it(`a disabled key is refused at once, then gets 401; enabled, it works again${ANY_KUBECTL_SKIP_REASON}`, async () => {
    const k = await createKey([]);
    assert.equal((await k.kubectl(["get", "pods", "-n", ns("in")])).code, 0);
    assert.equal((await pluginAsAdmin(["disable", k.name])).code, 0);
    // "At once": the watch brings the change to vgate within moments; 3 s is for slow machines.
    await refusedThen401(k, /access key disabled/, 3_000);
    assert.equal((await pluginAsAdmin(["enable", k.name])).code, 0);
    await until(
      async () => (await k.kubectl(["get", "pods", "-n", ns("in")])).code === 0,
      "the enabled key works again",
    );
  });

  it(`a key whose TTL has run out is refused, then gets 401${ANY_KUBECTL_SKIP_REASON}`, async () => {
    const k = await createKey(["--ttl", "5s"]);
    assert.equal((await k.kubectl(["get", "pods", "-n", ns("in")])).code, 0);
    // creationTimestamp has second precision: the key has at most 5 s left.
    await refusedThen401(k, /access key expired/, 8_000);
  });

  it(`a key's groups apply, and whoami names the key${ANY_KUBECTL_SKIP_REASON}`, async () => {
    // Only admins may give a key groups; the admin makes one for alice.
    const k = await createKey(["--user", alice(), "--group", "key-ci-bots"], []);
    const name = k.name;
    assert.equal(await keyName(k), name);
    const listed = await k.kubectl(["get", "namespaces", ns("in")]);
    assert.equal(listed.code, 0, listed.stderr);
    const whoami = await plugin(["whoami", "-o", "json"], { kubeconfig: k.kubeconfig });
    assert.equal(whoami.code, 0, whoami.stderr);
    const review = JSON.parse(whoami.stdout) as {
      status: {
        userInfo: { username: string; groups: string[]; extra?: Record<string, string[]> };
      };
    };
    assert.equal(review.status.userInfo.username, alice());
    assert.ok(review.status.userInfo.groups.includes("key-ci-bots"));
    assert.ok(review.status.userInfo.groups.includes("system:authenticated"));
    assert.deepEqual(review.status.userInfo.extra?.[`accesskey.${domainOf(contract.group)}/name`], [
      name,
    ]);
    const table = await plugin(["whoami"], { kubeconfig: k.kubeconfig });
    assert.equal(table.code, 0, table.stderr);
    assert.ok(table.stdout.includes(name), table.stdout);
    assert.ok(!table.stdout.includes(k.key), "whoami never prints the key");
  });

  it(`a used key's status.lastActivity is written by vgate${ANY_KUBECTL_SKIP_REASON}`, async () => {
    const k = await createKey([]);
    const name = k.name;
    assert.equal((await k.kubectl(["get", "pods", "-n", ns("in")])).code, 0);
    await until(
      async () => {
        const got = await admin([
          "get",
          "ownedaccesskey",
          name,
          "-o",
          "jsonpath={.status.lastActivity}",
        ]);
        return /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(got.stdout);
      },
      "status.lastActivity is set",
      20_000,
    );
  });

  it(`hostile bearer tokens get 401 and nothing else${ANY_KUBECTL_SKIP_REASON}`, async () => {
    const k = await createKey([]);
    const kc = new KubeConfig();
    kc.loadFromFile(contract.cluster.kubeconfigPath);
    const cluster = kc.getCurrentCluster()!;
    const ca = cluster.caData
      ? Buffer.from(cluster.caData, "base64").toString()
      : cluster.caFile
        ? await readFile(cluster.caFile, "utf8")
        : undefined;
    const nearMiss = k.key.slice(0, -1) + (k.key.endsWith("A") ? "B" : "A");
    const tokens = [
      nearMiss,
      `${k.key}x`,
      k.key.slice(1),
      k.key.toUpperCase(),
      "x".repeat(8192),
      // Bytes outside ASCII (Node sends header strings as latin1).
      "cl\u00e9-\u00ff\u00e9",
      `sha256:${"0".repeat(64)}`,
    ];
    for (const token of tokens) {
      const res = await httpsRequest(`${cluster.server}/api/v1/namespaces/${ns("in")}/pods`, {
        ca,
        headers: { Authorization: `Bearer ${token}` },
      });
      assert.equal(res.status, 401, `a token of ${token.length} characters: ${res.status}`);
      assert.ok(!res.text.includes(token), "the token is not echoed");
    }
    // The real key still works after all that.
    assert.equal((await k.kubectl(["get", "pods", "-n", ns("in")])).code, 0);
  });

  /** The key's name, from the whoami of its own login (extra attribute). */
  async function keyName(k: KeyLogin): Promise<string> {
    const run = await plugin(["whoami", "-o", "json"], { kubeconfig: k.kubeconfig });
    assert.equal(run.code, 0, run.stderr);
    const extra = (
      JSON.parse(run.stdout) as { status: { userInfo: { extra?: Record<string, string[]> } } }
    ).status.userInfo.extra;
    const name = extra?.[`accesskey.${domainOf(contract.group)}/name`]?.[0];
    assert.ok(name, "a key login names its key");
    return name;
  }
}

function domainOf(group: string): string {
  return group.replace(/^management\./, "");
}

async function must(run: Promise<{ code: number; stderr: string }>): Promise<void> {
  const r = await run;
  assert.equal(r.code, 0, r.stderr);
}
