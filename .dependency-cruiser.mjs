// `make lint`'s dependency check (dependency-cruiser). It reads the TypeScript sources before
// compilation (tsPreCompilationDeps), so `import type` and `import("…").T` count: a cycle of types
// only is still a cycle for a reader, and the compiler erases it too late to help the design.

// The modules of webhook/src/ that the generic controller parts may use besides their own folder:
// API access (the transport and its answers), no domain.
const GENERIC_MODULES = ["shared/transport\\.ts$", "shared/status\\.ts$", "shared/json\\.ts$"];

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Modules must not import each other, directly or through others, types included.",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-circular-folders",
      severity: "error",
      comment:
        "Folders say what the product does and depend one way: e.g. accesskeys/ uses admission/ " +
        "and kube/, never the other way round. What the plugin shares with the server lives in shared/.",
      scope: "folder",
      from: {},
      to: { circular: true },
    },
    {
      name: "plugin-imports-only-shared",
      severity: "error",
      comment:
        "The kubectl plugin shares with the server only what is in webhook/src/shared/ (API types, " +
        "kubeconfig and transport, error decoding, Go-compatible formatting); nothing else of the " +
        "server may reach the plugin's bundle.",
      from: { path: "^plugin/src/" },
      to: { path: "^webhook/", pathNot: "^webhook/src/shared/" },
    },
    {
      name: "shared-imports-only-shared",
      severity: "error",
      comment:
        "webhook/src/shared/ is what both the plugin and the server build on: it imports only " +
        "itself, node builtins and npm packages, never the rest of webhook/src, plugin/src or test/.",
      from: { path: "^webhook/src/shared/" },
      to: { path: "^(webhook|plugin|test)/", pathNot: "^webhook/src/shared/" },
    },
    {
      name: "one-patch-pipeline",
      severity: "error",
      comment:
        "Patches run only through sync/guarded-patch.ts (applyGuardedPatches), which keeps " +
        "vCluster's bookkeeping keys out of their reach; nothing else may use bookkeeping.ts.",
      from: { path: "^webhook/src/", pathNot: "^webhook/src/sync/guarded-patch\\.ts$" },
      to: { path: "^webhook/src/sync/bookkeeping\\.ts$" },
    },
    {
      name: "sandbox-through-patch-runner",
      severity: "error",
      comment:
        "The sandbox pool is started by sync/patch-runner.ts and driven by applyGuardedPatches; " +
        "only `vgate bench` (which measures the bare engine) drives it directly.",
      from: {
        path: "^webhook/src/",
        pathNot: "^webhook/src/(patches/sandbox/|sync/patch-runner\\.ts$|cli/bench\\.ts$)",
      },
      to: { path: "^webhook/src/patches/sandbox/pool\\.ts$" },
    },
    {
      name: "generic-controller-parts",
      severity: "error",
      comment:
        "kube/controller/ holds the controller machinery that knows no domain (watch cache, work " +
        "queue, leader election, event recorder, config watcher, probe server, metrics), as " +
        "client-go keeps tools/cache, util/workqueue, tools/leaderelection and tools/record " +
        "apart. It may import only itself, Node's modules, npm packages and GENERIC_MODULES; a " +
        "controller passes its domain in (a key, a path, a name, a callback).",
      from: { path: "^webhook/src/kube/controller/" },
      to: {
        dependencyTypesNot: ["core"],
        pathNot: `^(node_modules/|webhook/src/(kube/controller/|${GENERIC_MODULES.join("|")}))`,
      },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(dist|node_modules)/" },
  },
};
