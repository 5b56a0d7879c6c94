// The patch-engine benchmark's corpora, made here: objects of three sizes, each with the
// expression patches (virtual to host) a tenant might configure. Written to a file in the format
// `vgate bench --corpus` reads (and the goja reference harness too):
//   {"vcluster": {"name", "namespace"}, "scenarios": [{"name", "object", "patches"}]}
// The expressions stay within ES5, which the goja snapshot the harness uses understands, and
// return the same JSON in both engines.
//
// CORPUS is the Endpoints corpus the engine was first measured on. GENERATED holds corpora that
// no change to the engine was tuned against (issue 26): many patches on one object, long paths
// through nested objects, wildcards in most positions, and regular expressions in every patch.

import { writeFileSync } from "node:fs";

interface Patch {
  path: string;
  expression: string;
}

interface Scenario {
  name: string;
  object: Record<string, unknown>;
  patches: Patch[];
}

export interface Corpus {
  description: string;
  vcluster: { name: string; namespace: string };
  scenarios: Scenario[];
}

const VCLUSTER = { name: "team-a", namespace: "vcluster-team-a" };

function endpoints(addresses: number, annotations: number): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: {
      name: "orders-db",
      namespace: "shop",
      labels: { app: "orders-db", tier: "data" },
      annotations: Object.fromEntries(
        Array.from({ length: annotations }, (_, i) => [`shop.example.com/note-${i}`, `note-${i}`]),
      ),
    },
    subsets: [
      {
        addresses: Array.from({ length: addresses }, (_, i) => ({
          ip: `10.${(i >> 8) & 255}.${i & 255}.${(i % 250) + 2}`,
          hostname: `orders-db-${i}`,
          targetRef: { kind: "Pod", name: `orders-db-${i}`, namespace: "shop" },
        })),
        ports: [
          { name: "postgres", port: 5432, protocol: "TCP" },
          { name: "replication", port: 5433, protocol: "TCP" },
          { name: "exporter", port: 9187, protocol: "TCP" },
        ],
      },
    ],
  };
}

const FIVE_PATCHES: Patch[] = [
  { path: "subsets[*].addresses[*].hostname", expression: 'value + "-" + context.vcluster.name' },
  {
    path: "subsets[*].addresses[*].ip",
    expression: '"172.16." + value.split(".").slice(2).join(".")',
  },
  { path: "subsets[*].ports[*].name", expression: '"host-" + value.toLowerCase()' },
  { path: "metadata.annotations[*]", expression: 'value.replace(/-/g, "_")' },
  {
    path: 'metadata.labels["app"]',
    expression: 'value + "." + context.vcluster.namespace',
  },
];

export const CORPUS: Corpus = {
  description: "Endpoints and expression patches, made by test/bench/corpus.ts for make bench",
  vcluster: VCLUSTER,
  scenarios: [
    {
      name: "small-1-expression",
      object: endpoints(2, 1),
      patches: [
        {
          path: 'metadata.annotations["shop.example.com/note-0"]',
          expression: '"tenant-" + value',
        },
      ],
    },
    { name: "medium-100-addresses-5-patches", object: endpoints(100, 10), patches: FIVE_PATCHES },
    { name: "large-1000-addresses-5-patches", object: endpoints(1000, 40), patches: FIVE_PATCHES },
  ],
};

/** Small, medium and large: the sizes every corpus has, as `make bench` reports them. */
const SIZES = [
  ["small", 2],
  ["medium", 100],
  ["large", 1000],
] as const;

function sized(
  description: string,
  make: (n: number) => Pick<Scenario, "object" | "patches">,
  what: string,
): Corpus {
  return {
    description,
    vcluster: VCLUSTER,
    scenarios: SIZES.map(([size, n]) => ({ name: `${size}-${n}-${what}`, ...make(n) })),
  };
}

/** 40 patches, most of which name one key each; a few run over every address. */
function manyPatches(n: number): Pick<Scenario, "object" | "patches"> {
  const annotations = Array.from({ length: 32 }, (_, i) => ({
    path: `metadata.annotations["shop.example.com/note-${i}"]`,
    expression: `value + "/${i}"`,
  }));
  return {
    object: endpoints(n, 32),
    patches: [
      ...annotations,
      { path: "metadata.labels.app", expression: '"vc-" + value' },
      { path: "metadata.labels.tier", expression: "value.toUpperCase()" },
      { path: "metadata.name", expression: 'value + "-x-" + context.vcluster.name' },
      { path: "subsets[*].addresses[*].hostname", expression: 'value + "." + "svc"' },
      { path: "subsets[*].addresses[*].targetRef.name", expression: 'value + "-x-team-a"' },
      {
        path: "subsets[*].addresses[*].targetRef.namespace",
        expression: "context.vcluster.namespace",
      },
      { path: "subsets[*].ports[0].port", expression: "value + 10000" },
      { path: "subsets[*].ports[*].protocol", expression: "value.toLowerCase()" },
    ],
  };
}

/** A Deployment-like tree: containers with env lists, patched twelve segments deep. */
function deepObject(n: number): Record<string, unknown> {
  const containers = Math.max(1, Math.round(n / 10));
  const env = Math.min(n, 10);
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "shop", labels: { app: "web" } },
    spec: {
      template: {
        metadata: { labels: { app: "web", "app.kubernetes.io/part-of": "shop" } },
        spec: {
          containers: Array.from({ length: containers }, (_, c) => ({
            name: `c${c}`,
            image: `registry.example.com/shop/web-${c}:1.${c}.0`,
            env: Array.from({ length: env }, (_, e) => ({
              name: `VAR_${e}`,
              valueFrom: {
                configMapKeyRef: { name: `config-${c}-${e}`, key: `key.${e}`, optional: false },
                secretKeyRef: { name: `secret-${c}-${e}`, key: `token-${e}` },
              },
            })),
            volumeMounts: [{ name: "data", mountPath: `/var/lib/web/${c}` }],
          })),
        },
      },
    },
  };
}

function longPaths(n: number): Pick<Scenario, "object" | "patches"> {
  const env = "spec.template.spec.containers[*].env[*].valueFrom";
  return {
    object: deepObject(n),
    patches: [
      { path: `${env}.configMapKeyRef.name`, expression: 'value + "-x-" + context.vcluster.name' },
      { path: `${env}["secretKeyRef"]["name"]`, expression: '"vc-" + value' },
      { path: `${env}.configMapKeyRef.key`, expression: 'value.split(".").join("_")' },
      {
        path: "spec.template.spec.containers[*].volumeMounts[0].mountPath",
        expression: '"/host" + value',
      },
      {
        path: 'spec.template.metadata.labels["app.kubernetes.io/part-of"]',
        expression: 'value + "." + context.vcluster.namespace',
      },
    ],
  };
}

function wildcardHeavy(n: number): Pick<Scenario, "object" | "patches"> {
  // Values of every type meet the wildcards; strings are changed, the rest pass through.
  const str = (suffix: string): string => `typeof value === "string" ? value + "${suffix}" : value`;
  return {
    object: endpoints(n, 20),
    patches: [
      { path: "subsets[*].addresses[*].*", expression: str("-a") },
      { path: "subsets[*].addresses[*].targetRef.*", expression: str("-t") },
      { path: "subsets.*.ports[*].*", expression: str("-p") },
      { path: "metadata.*[*]", expression: str("-m") },
      { path: "*[*].addresses[*].hostname", expression: "value.length > 3 ? value : value + 1" },
    ],
  };
}

function regexpHeavy(n: number): Pick<Scenario, "object" | "patches"> {
  return {
    object: endpoints(n, 20),
    patches: [
      { path: "subsets[*].addresses[*].hostname", expression: 'value.replace(/-(\\d+)$/, ".$1")' },
      {
        path: "subsets[*].addresses[*].ip",
        expression: '/^10\\./.test(value) ? value.replace(/^10\\./, "172.16.") : value',
      },
      {
        path: "subsets[*].addresses[*].targetRef.name",
        expression: 'value.match(/\\d+/) ? "pod-" + value.match(/\\d+/)[0] : value',
      },
      { path: "metadata.annotations[*]", expression: 'value.split(/[.-]/).join("_")' },
      { path: "subsets[*].ports[*].name", expression: 'value.replace(/[aeiou]/g, "")' },
    ],
  };
}

/** Corpora no change was tuned against, by name. */
export const GENERATED: Record<string, Corpus> = {
  "many-patches": sized("40 patches on one Endpoints", manyPatches, "addresses-40-patches"),
  "long-paths": sized(
    "paths of up to 12 segments through a Deployment",
    longPaths,
    "env-5-patches",
  ),
  "wildcard-heavy": sized("wildcards in most positions", wildcardHeavy, "addresses-5-patches"),
  "regexp-heavy": sized("a regular expression in every patch", regexpHeavy, "addresses-5-patches"),
};

export function writeCorpus(path: string, corpus: Corpus = CORPUS): string {
  writeFileSync(path, JSON.stringify(corpus));
  return path;
}
