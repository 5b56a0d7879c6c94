// The patch-engine benchmark's corpus, made here: Endpoints objects of three sizes, each with the
// expression patches (virtual to host) a tenant might configure. Written to a file in the format
// `vgate bench --corpus` reads (and the goja reference harness too):
//   {"vcluster": {"name", "namespace"}, "scenarios": [{"name", "object", "patches"}]}
// The expressions stay within ES5, which the goja snapshot the harness uses understands.

import { writeFileSync } from "node:fs";

interface Patch {
  path: string;
  expression: string;
}

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

export const CORPUS = {
  description: "Endpoints and expression patches, made by test/bench/corpus.ts for make bench",
  vcluster: { name: "team-a", namespace: "vcluster-team-a" },
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

export function writeCorpus(path: string): string {
  writeFileSync(path, JSON.stringify(CORPUS));
  return path;
}
