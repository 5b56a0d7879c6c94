// `vgate sync` flags: the typed options and their defaults (parseSyncArgs), and the binary's
// --help, usage errors (exit 2) and a bad config file at start (exit 1, every problem listed).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { CliError, EXIT } from "../../../webhook/src/cli/errors.js";
import { parseSyncArgs } from "../../../webhook/src/cli/sync-options.js";
import type { SyncOptions } from "../../../webhook/src/sync/controller/options.js";
import { repoRoot } from "../../support/fixtures.js";
import { testTempDir } from "../../support/temp-dir.js";

const bin = resolve(repoRoot, "webhook/bin/vgate");
const env = (): NodeJS.ProcessEnv => {
  const e = { ...process.env };
  delete e.KUBECONFIG;
  return e;
};
const run = (...args: string[]) =>
  spawnSync(bin, ["sync", ...args], { encoding: "utf8", env: env(), timeout: 20_000 });

const REQUIRED = [
  "--config=vcluster.yaml",
  "--virtual-kubeconfig=v.kubeconfig",
  "--host-kubeconfig=h.kubeconfig",
  "--vcluster-name=my-vc",
  "--vcluster-namespace=vcluster-my-vc",
];

const parse = (...extra: string[]) => parseSyncArgs([...REQUIRED, ...extra], {}) as SyncOptions;

function usage(args: string[], message: RegExp): void {
  assert.throws(
    () => parseSyncArgs(args),
    (err: unknown) =>
      err instanceof CliError && err.exitCode === EXIT.USAGE && message.test(err.message),
  );
}

describe("vgate sync flags", function () {
  this.timeout(30_000);

  it("defaults: kube and controller-runtime conventions", () => {
    const o = parse();
    assert.deepEqual(o, {
      config: "vcluster.yaml",
      virtualKubeconfig: "v.kubeconfig",
      hostKubeconfig: "h.kubeconfig",
      vclusterName: "my-vc",
      vclusterNamespace: "vcluster-my-vc",
      alongsideVCluster: false,
      targetNamespace: "vcluster-my-vc",
      selfNamespace: undefined,
      referenceSecretTypes: [
        "Opaque",
        "kubernetes.io/tls",
        "kubernetes.io/basic-auth",
        "kubernetes.io/ssh-auth",
        "kubernetes.io/dockerconfigjson",
      ],
      workers: 2,
      patchTimeoutMs: 100,
      patchWorkers: undefined,
      leaderElection: {
        enabled: true,
        id: "vgate-sync-my-vc",
        namespace: "vcluster-my-vc",
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
      },
      healthProbeBindAddress: ":8081",
      metricsBindAddress: ":8080",
      shutdownTimeoutMs: 25_000,
      logLevel: "info",
    });
  });

  it("takes every flag, --leader-elect=false as Go's flag package does, and 0 to disable a server", () => {
    const o = parse(
      "--target-namespace=other",
      "--workers=8",
      "--patch-timeout=2s",
      "--patch-workers=3",
      "--leader-elect=false",
      "--leader-election-id=my-lease",
      "--leader-election-namespace=kube-system",
      "--leader-elect-lease-duration=1m",
      "--leader-elect-renew-deadline=30s",
      "--leader-elect-retry-period=500ms",
      "--health-probe-bind-address=127.0.0.1:0",
      "--metrics-bind-address=0",
      "--shutdown-timeout=5s",
      "--log-level=debug",
    );
    assert.equal(o.targetNamespace, "other");
    assert.equal(o.workers, 8);
    assert.equal(o.patchTimeoutMs, 2000);
    assert.equal(o.patchWorkers, 3);
    assert.deepEqual(o.leaderElection, {
      enabled: false,
      id: "my-lease",
      namespace: "kube-system",
      leaseDurationMs: 60_000,
      renewDeadlineMs: 30_000,
      retryPeriodMs: 500,
    });
    assert.equal(o.healthProbeBindAddress, "127.0.0.1:0");
    assert.equal(o.metricsBindAddress, null);
    assert.equal(o.shutdownTimeoutMs, 5000);
    assert.equal(parse("--leader-elect").leaderElection.enabled, true);
    assert.equal(parse("--leader-elect=true").leaderElection.enabled, true);
  });

  it("--alongside-vcluster: off by default, on as a switch or =true, off with =false", () => {
    assert.equal(parse().alongsideVCluster, false);
    assert.equal(parse("--alongside-vcluster").alongsideVCluster, true);
    assert.equal(parse("--alongside-vcluster=true").alongsideVCluster, true);
    assert.equal(parse("--alongside-vcluster=false").alongsideVCluster, false);
    assert.equal(
      parse("--alongside-vcluster", "--leader-elect=false").leaderElection.enabled,
      false,
    );
    usage(
      [...REQUIRED, "--alongside-vcluster=yes"],
      /invalid --alongside-vcluster "yes": true or false/,
    );
  });

  it("--namespace (default $POD_NAMESPACE) and --reference-secret-types; reserved targets refused", () => {
    assert.equal(parse("--namespace=vgate-system").selfNamespace, "vgate-system");
    const fromEnv = parseSyncArgs(REQUIRED, { POD_NAMESPACE: "from-pod" }) as SyncOptions;
    assert.equal(fromEnv.selfNamespace, "from-pod");
    assert.deepEqual(
      parse("--reference-secret-types= Opaque,example.com/x,Opaque").referenceSecretTypes,
      ["Opaque", "example.com/x"],
    );
    for (const type of ["kubernetes.io/service-account-token", "bootstrap.kubernetes.io/token"]) {
      usage(
        [...REQUIRED, `--reference-secret-types=Opaque,${type}`],
        new RegExp(
          `invalid --reference-secret-types: "${type.replaceAll(".", "\\.")}" Secrets carry credentials`,
        ),
      );
    }
    usage([...REQUIRED, "--reference-secret-types=,"], /needs at least one Secret type/);
    usage([...REQUIRED, "--namespace=Bad_Ns"], /invalid --namespace "Bad_Ns"/);
    for (const ns of ["kube-system", "kube-public", "kube-node-lease", "default"]) {
      usage([...REQUIRED, `--target-namespace=${ns}`], /vgate sync never writes to kube-system/);
      usage(
        [...REQUIRED.slice(0, 4), `--vcluster-namespace=${ns}`],
        new RegExp(`invalid --vcluster-namespace "${ns}": vgate sync never writes to`),
      );
    }
  });

  it("usage errors name the flag and what is wrong", () => {
    usage(
      [],
      /vgate sync needs --config, --virtual-kubeconfig, --vcluster-name, --vcluster-namespace/,
    );
    usage(REQUIRED.slice(1), /needs --config\n/);
    usage([...REQUIRED, "--workers=0"], /invalid --workers "0": an integer from 1 to 99/);
    usage([...REQUIRED, "--leader-elect=maybe"], /invalid --leader-elect "maybe": true or false/);
    usage(
      [...REQUIRED, "--leader-elect-lease-duration=5s"],
      /lease-duration must be greater than --leader-elect-renew-deadline/,
    );
    usage(
      [...REQUIRED, "--leader-elect-retry-period=9s"],
      /renew-deadline must be greater than 1.2 times --leader-elect-retry-period/,
    );
    usage(
      [...REQUIRED, "--leader-elect-retry-period=soon"],
      /invalid --leader-elect-retry-period "soon": use a duration/,
    );
    usage(
      [...REQUIRED, "--metrics-bind-address=8080"],
      /invalid --metrics-bind-address "8080": use host:port, :port, or 0/,
    );
    usage([...REQUIRED, "--log-level=loud"], /invalid --log-level "loud"/);
    usage([...REQUIRED, "--target-namespace=Not_A_Namespace"], /invalid --target-namespace/);
    usage([...REQUIRED, "--leader-election-id=-x"], /invalid --leader-election-id/);
    usage(
      [...REQUIRED, "--kubeconfig=x"],
      /unknown flag: --kubeconfig for "vgate sync"[\s\S]*Run 'vgate sync --help' for usage/,
    );
    usage([...REQUIRED, "extra"], /unexpected argument "extra"/);
  });

  it("vgate sync --help describes every flag and exits 0", () => {
    const r = run("--help");
    assert.equal(r.status, 0, r.stderr);
    for (const flag of [
      "--config",
      "--virtual-kubeconfig",
      "--host-kubeconfig",
      "--vcluster-name",
      "--vcluster-namespace",
      "--alongside-vcluster",
      "--target-namespace",
      "--namespace",
      "--reference-secret-types",
      "--workers",
      "--patch-timeout",
      "--patch-workers",
      "--leader-elect ",
      "--leader-election-id",
      "--leader-election-namespace",
      "--leader-elect-lease-duration",
      "--leader-elect-renew-deadline",
      "--leader-elect-retry-period",
      "--health-probe-bind-address",
      "--metrics-bind-address",
      "--shutdown-timeout",
      "--log-level",
      "--help",
    ]) {
      assert.ok(r.stdout.includes(flag), `--help mentions ${flag}`);
    }
    const root = spawnSync(bin, ["--help"], { encoding: "utf8", env: env() });
    assert.match(
      root.stdout,
      /sync\s+Sync Endpoints and EndpointSlices from a virtual cluster to its host/,
    );
  });

  it("a usage error exits 2 with the message on standard error", () => {
    const r = run("--config=x.yaml");
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      /^error: vgate sync needs --virtual-kubeconfig, --vcluster-name, --vcluster-namespace\n/,
    );
    assert.equal(r.stdout, "");
  });

  it("a bad config file exits 1 listing every problem, before connecting anywhere", () => {
    const dir = testTempDir("vgate-sync-flags-");
    const config = join(dir, "vcluster.yaml");
    writeFileSync(
      config,
      [
        "sync:",
        "  toHost:",
        "    endpoints:",
        "      patches:",
        "        - path: metadata.annotations[]",
        "          expression: '\"x\"'",
        "        - path: metadata.labels.a",
        "          expression: 'value +'",
        "",
      ].join("\n"),
    );
    const r = run(
      `--config=${config}`,
      `--virtual-kubeconfig=${join(dir, "missing-v")}`,
      `--host-kubeconfig=${join(dir, "missing-h")}`,
      "--vcluster-name=vc",
      "--vcluster-namespace=ns",
      "--health-probe-bind-address=0",
      "--metrics-bind-address=0",
    );
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^error: invalid config .*vcluster\.yaml:\n/);
    assert.match(r.stderr, /patches\[0\]/);
    assert.match(r.stderr, /patches\[1\]/);
  });

  it("--alongside-vcluster with a config that leaves vCluster's Endpoints sync on exits 1, before connecting anywhere", () => {
    const dir = testTempDir("vgate-sync-flags-");
    const config = join(dir, "vcluster.yaml");
    // The plain config of `vgate sync` alone: vCluster's switches unset, that is on.
    writeFileSync(config, "sync:\n  toHost:\n    endpoints:\n      patches: []\n");
    const r = run(
      `--config=${config}`,
      `--virtual-kubeconfig=${join(dir, "missing-v")}`,
      `--host-kubeconfig=${join(dir, "missing-h")}`,
      "--vcluster-name=vc",
      "--vcluster-namespace=ns",
      "--alongside-vcluster",
    );
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^error: invalid config .*vcluster\.yaml:\n/);
    assert.match(
      r.stderr,
      /\n {2}sync\.toHost\.endpoints\.enabled must be false with --alongside-vcluster/,
    );
    assert.match(r.stderr, /\n {2}sync\.toHost\.endpointSlices\.enabled must be false/);
    assert.doesNotMatch(
      r.stderr,
      /kubeconfig/,
      "the config is refused before any kubeconfig is read",
    );
  });

  it("a kubeconfig that cannot be read exits 1 and names the flag", () => {
    const dir = testTempDir("vgate-sync-flags-");
    const config = join(dir, "vcluster.yaml");
    writeFileSync(config, "sync:\n  toHost:\n    endpoints:\n      enabled: true\n");
    const r = run(
      `--config=${config}`,
      `--virtual-kubeconfig=${join(dir, "missing-v")}`,
      `--host-kubeconfig=${join(dir, "missing-h")}`,
      "--vcluster-name=vc",
      "--vcluster-namespace=ns",
    );
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^error: --virtual-kubeconfig: cannot read kubeconfig ".*missing-v"/);
  });

  it("without --host-kubeconfig the host is the pod's service account; outside a pod: exit 1, what to do", () => {
    const args = REQUIRED.filter((a) => !a.startsWith("--host-kubeconfig="));
    assert.equal((parseSyncArgs(args, {}) as SyncOptions).hostKubeconfig, undefined);
    const dir = testTempDir("vgate-sync-flags-");
    const config = join(dir, "vcluster.yaml");
    writeFileSync(config, "sync:\n  toHost:\n    endpoints:\n      enabled: true\n");
    const virtual = join(dir, "virtual.kubeconfig");
    writeFileSync(
      virtual,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{name: v, cluster: {server: 'https://127.0.0.1:1'}}]",
        "users: [{name: v, user: {token: not-used}}]",
        "contexts: [{name: v, context: {cluster: v, user: v}}]",
        "current-context: v",
        "",
      ].join("\n"),
    );
    const e = env();
    delete e.KUBERNETES_SERVICE_HOST;
    delete e.KUBERNETES_SERVICE_PORT;
    const r = spawnSync(
      bin,
      [
        "sync",
        `--config=${config}`,
        `--virtual-kubeconfig=${virtual}`,
        "--vcluster-name=vc",
        "--vcluster-namespace=ns",
        "--health-probe-bind-address=0",
        "--metrics-bind-address=0",
      ],
      { encoding: "utf8", env: e, timeout: 20_000 },
    );
    assert.equal(r.status, 1, r.stderr);
    assert.match(
      r.stderr,
      /^error: no --host-kubeconfig, and not in a pod: \$KUBERNETES_SERVICE_HOST, \$KUBERNETES_SERVICE_PORT or \/var\/run\/secrets\/kubernetes\.io\/serviceaccount\/token is missing; pass --host-kubeconfig\n/,
    );
  });
});
