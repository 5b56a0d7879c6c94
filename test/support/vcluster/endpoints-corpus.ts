// The virtual Endpoints of test/cluster/vcluster-translation.test.ts: a fixed corpus that covers
// each case once (several namespaces, hostnames, Pod targetRefs of every shape, names long enough to
// be hashed, labels and annotations of every kind, vCluster's own keys and kubernetes.io ones
// included), and fast-check arbitraries for more of the same. Every object is valid for
// kube-apiserver (ValidateEndpoints, ValidateObjectMeta): what vCluster's syncer meets in a real
// virtual cluster, written by hand next to a selector-less Service.

import fc from "fast-check";

export interface Address {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: Record<string, string>;
}

export interface Subset {
  addresses?: Address[];
  notReadyAddresses?: Address[];
  ports?: { name?: string; port: number; protocol?: string; appProtocol?: string }[];
}

/** One corpus entry: a virtual Service (no selector) and its Endpoints. */
export interface Entry {
  /** Why the entry is in the fixed corpus; "generated" for the arbitrary's. */
  why: string;
  namespace: string;
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  subsets?: Subset[];
  generateName?: string;
  finalizers?: string[];
  /** Owner reference to the virtual Service (its uid is known only once it has settled). */
  ownedByService?: { controller: boolean };
  /** vCluster's syncer leaves this one alone (vcluster.loft.sh/controlled-by). */
  notSynced?: boolean;
}

/** The vCluster name every entry is written for (the rig's). */
const VC = "vc";

const pod = (name: string, namespace?: string, extra: Record<string, string> = {}) => ({
  kind: "Pod",
  ...(namespace === undefined ? {} : { namespace }),
  name,
  uid: "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9",
  resourceVersion: "4711",
  ...extra,
});

const http = [{ name: "http", port: 80, protocol: "TCP" }];

/** vCluster's translated key of `release` for vCluster "vc" (docs/reference.md#label-keys). */
const TRANSLATED_RELEASE = "vcluster.loft.sh/label-vc-x-a4d451ec23";

export function fixedCorpus(): Entry[] {
  return [
    {
      why: "the smallest: one address, no labels or annotations",
      namespace: "default",
      name: "plain",
      subsets: [{ addresses: [{ ip: "10.200.0.1" }], ports: [{ port: 80 }] }],
    },
    {
      why: "another namespace, hostnames, a node name, ready and not-ready addresses, several ports",
      namespace: "team-a",
      name: "db",
      subsets: [
        {
          addresses: [
            { ip: "10.200.1.1", hostname: "db-0", nodeName: "vgate-node" },
            { ip: "10.200.1.2", hostname: "db-1" },
          ],
          notReadyAddresses: [{ ip: "10.200.1.3", hostname: "db-2" }],
          ports: [
            { name: "pg", port: 5432, protocol: "TCP" },
            { name: "metrics", port: 9187, protocol: "TCP" },
            { name: "dns", port: 53, protocol: "UDP" },
            { name: "sctp", port: 9999, protocol: "SCTP" },
            { name: "h2c", port: 8080, protocol: "TCP", appProtocol: "kubernetes.io/h2c" },
          ],
        },
        { addresses: [{ ip: "fd00:200::1" }], ports: [{ name: "pg", port: 5432 }] },
      ],
    },
    {
      why: "Pod targetRefs: this namespace, another, none, no name, lowercase kind, a Node, extra fields",
      namespace: "team-b",
      name: "refs",
      subsets: [
        {
          addresses: [
            { ip: "10.200.2.1", targetRef: pod("web-0", "team-b") },
            { ip: "10.200.2.2", targetRef: pod("web-1", "team-a", { apiVersion: "v1" }) },
            { ip: "10.200.2.3", targetRef: pod("no-namespace") },
            { ip: "10.200.2.4", targetRef: { kind: "Pod", namespace: "team-b", uid: "u" } },
            { ip: "10.200.2.5", targetRef: pod("lower", "team-b", { kind: "pod" }) },
            { ip: "10.200.2.6", targetRef: { kind: "Node", name: "vgate-node", uid: "n" } },
            { ip: "10.200.2.7", targetRef: { name: "kindless", namespace: "team-b" } },
          ],
          notReadyAddresses: [
            { ip: "10.200.2.8", targetRef: pod("web-2", "team-b", { fieldPath: "spec" }) },
          ],
          ports: http,
        },
      ],
    },
    {
      why: "names long enough to be hashed: the object's, and Pods' (a '.' at the cut, 253 bytes)",
      namespace: "a-namespace-with-a-rather-long-name-for-hashing",
      name: "a-service-whose-name-is-long-enough-to-be-hashed-on-the-host",
      subsets: [
        {
          addresses: [
            { ip: "10.200.3.1", targetRef: pod(`${"a".repeat(51)}.b.c`, "team-a") },
            { ip: "10.200.3.2", targetRef: pod(`${"p".repeat(50)}.-q`, "team-a") },
            { ip: "10.200.3.3", targetRef: pod("x".repeat(253), "team-a") },
            {
              ip: "10.200.3.4",
              targetRef: pod("short", "n".repeat(63)),
            },
          ],
          ports: http,
        },
      ],
    },
    {
      why: "exactly 63 bytes on the host is kept, 64 is hashed",
      namespace: "ns63",
      // name-x-ns63-x-vc: 63 bytes with a 50-byte name, 64 with 51.
      name: "n".repeat(50),
      subsets: [
        {
          addresses: [
            { ip: "10.200.4.1", targetRef: pod("m".repeat(50), "ns63") },
            { ip: "10.200.4.2", targetRef: pod("m".repeat(51), "ns63") },
          ],
          ports: http,
        },
      ],
    },
    {
      why: "non-ASCII Pod names cut inside a character (an é, a €, an emoji)",
      namespace: "team-b",
      name: "unicode",
      subsets: [
        {
          addresses: [
            { ip: "10.200.5.1", targetRef: pod(`p${"é".repeat(30)}`, "team-b") },
            { ip: "10.200.5.2", targetRef: pod(`${"a".repeat(50)}${"€".repeat(5)}`, "team-b") },
            { ip: "10.200.5.3", targetRef: pod(`${"a".repeat(49)}${"😀".repeat(5)}`, "team-b") },
            { ip: "10.200.5.4", targetRef: pod("ünïcödé-short", "team-b") },
          ],
          ports: http,
        },
      ],
    },
    {
      why: "labels of every kind: plain, translated, pre-translated (dropped), kubernetes.io, empty",
      namespace: "team-a",
      name: "labels",
      labels: {
        app: "db",
        "app.kubernetes.io/name": "db",
        "kubernetes.io/service-name": "labels",
        "endpointslice.kubernetes.io/managed-by": "someone",
        "service.kubernetes.io/headless": "",
        release: "r1",
        "vcluster.loft.sh/namespace": "spoofed",
        "vcluster.loft.sh/managed-by": "spoofed",
        [TRANSLATED_RELEASE]: "spoofed",
        [`vcluster.loft.sh/ns-label-${VC}-x-0123456789`]: "kept",
        "vcluster.loft.sh/label-other-x-0123456789": "kept",
        "example.com/empty": "",
      },
      subsets: [{ addresses: [{ ip: "10.200.6.1" }], ports: http }],
    },
    {
      why: "annotations of every kind, vCluster's bookkeeping and kubernetes.io keys included",
      namespace: "team-a",
      name: "annotations",
      annotations: {
        owner: "team-a",
        "example.com/multi-line": "one\ntwo\n",
        "example.com/unicode": "größe ✓ 日本",
        "example.com/empty": "",
        "example.com/json": '{"a":[1,2,{"b":null}]}',
        "example.com/long": "x".repeat(10_000),
        "kubectl.kubernetes.io/last-applied-configuration": '{"kind":"Endpoints"}',
        "endpoints.kubernetes.io/last-change-trigger-time": "2026-01-01T00:00:00Z",
        "endpoints.kubernetes.io/over-capacity": "truncated",
        "control-plane.alpha.kubernetes.io/leader": '{"holderIdentity":"x"}',
        "vcluster.loft.sh/object-name": "spoofed",
        "vcluster.loft.sh/object-namespace": "spoofed",
        "vcluster.loft.sh/object-uid": "spoofed",
        "vcluster.loft.sh/object-kind": "spoofed",
        "vcluster.loft.sh/object-host-name": "spoofed",
        "vcluster.loft.sh/object-host-namespace": "spoofed",
        "vcluster.loft.sh/managed-annotations": "spoofed",
        "vcluster.loft.sh/managed-labels": "spoofed\nkeys",
        "vcluster.loft.sh/object-imported": "true",
        "vcluster.loft.sh/controlled-by": "endpoints",
        "vcluster.loft.sh/skip-backsync": "true",
        // vgate sync's own bookkeeping, which it never copies (docs/decisions.md#eps-17).
        "vgate.loft.sh/sync-snapshot": '{"v":1}',
      },
      subsets: [{ addresses: [{ ip: "10.200.7.1" }], ports: http }],
    },
    {
      why: "metadata vCluster resets: generateName, finalizers, a controller owner reference",
      namespace: "team-b",
      name: "owned",
      generateName: "owned-",
      finalizers: ["example.com/keep"],
      ownedByService: { controller: true },
      subsets: [{ addresses: [{ ip: "10.200.8.1" }], ports: http }],
    },
    {
      why: "an owner reference that is not a controller",
      namespace: "team-b",
      name: "owned-not-controller",
      ownedByService: { controller: false },
      subsets: [{ addresses: [{ ip: "10.200.8.2" }], ports: http }],
    },
    {
      why: "no subsets at all",
      namespace: "team-a",
      name: "empty",
    },
    {
      why: "a subset with only not-ready addresses",
      namespace: "team-a",
      name: "not-ready",
      subsets: [{ notReadyAddresses: [{ ip: "10.200.9.1" }], ports: http }],
    },
    {
      why: "labelled vcluster.loft.sh/controlled-by: vCluster leaves it to that controller",
      namespace: "team-a",
      name: "controlled-label",
      labels: { "vcluster.loft.sh/controlled-by": "someone" },
      subsets: [{ addresses: [{ ip: "10.200.10.1" }], ports: http }],
      notSynced: true,
    },
    {
      why: "annotated vcluster.loft.sh/controlled-by another syncer: left alone too",
      namespace: "team-b",
      name: "controlled-annotation",
      annotations: { "vcluster.loft.sh/controlled-by": "services" },
      subsets: [{ addresses: [{ ip: "10.200.10.2" }], ports: http }],
      notSynced: true,
    },
  ];
}

// ---- the arbitraries ----

const LOWER = [..."abcdefghijklmnopqrstuvwxyz"];
const DIGITS = [..."0123456789"];
const UPPER = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZ"];

/**
 * `first`, then up to `max - 2` of `middle`, then one of `last` (or `first` alone): lengths spread
 * over the whole range (size "max"), so long, hashed names are as likely as short ones.
 */
const shaped = (first: string[], middle: string[], last: string[], max: number, min = 1) => {
  const long = fc
    .tuple(
      fc.constantFrom(...first),
      fc.string({
        unit: fc.constantFrom(...middle),
        minLength: Math.max(0, min - 2),
        maxLength: max - 2,
        size: "max",
      }),
      fc.constantFrom(...last),
    )
    .map(([a, m, z]) => a + m + z);
  return min > 1 ? long : fc.oneof(fc.constantFrom(...first), long);
};

/** A DNS-1035 label (a Service's name) of at most `max` characters. */
const dnsLabel = (max: number, min = 1) =>
  shaped(LOWER, [...LOWER, ...DIGITS, "-"], [...LOWER, ...DIGITS], max, min);

const ALNUM = [...LOWER, ...UPPER, ...DIGITS];
/** A label value or a key's name part: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, 63 at most. */
const labelName = shaped(ALNUM, [...ALNUM, "-", "_", "."], ALNUM, 63);

/** A label key: an optional DNS-subdomain prefix and a name of [A-Za-z0-9_.-]. */
const qualifiedName = fc
  .tuple(
    fc.option(fc.constantFrom("example.com", "kubernetes.io", "vcluster.loft.sh", "a.b.c"), {
      nil: undefined,
    }),
    labelName,
  )
  .map(([prefix, name]) => (prefix === undefined ? name : `${prefix}/${name}`));

/** Keys vCluster treats specially, mixed into the generated ones. */
const SPECIAL_LABEL_KEYS = [
  "release",
  "vcluster.loft.sh/namespace",
  "vcluster.loft.sh/managed-by",
  TRANSLATED_RELEASE,
  "app.kubernetes.io/name",
  "kubernetes.io/service-name",
];
const SPECIAL_ANNOTATION_KEYS = [
  "vcluster.loft.sh/object-name",
  "vcluster.loft.sh/object-uid",
  "vcluster.loft.sh/object-host-namespace",
  "vcluster.loft.sh/managed-annotations",
  "vcluster.loft.sh/managed-labels",
  "vcluster.loft.sh/object-imported",
  "control-plane.alpha.kubernetes.io/leader",
  "kubectl.kubernetes.io/last-applied-configuration",
  "vgate.loft.sh/sync-snapshot",
];

const labelValue = fc.oneof(fc.constant(""), labelName);

const labels = fc.dictionary(
  fc.oneof(fc.constantFrom(...SPECIAL_LABEL_KEYS), qualifiedName),
  labelValue,
  { maxKeys: 5 },
);

const annotations = fc.dictionary(
  fc.oneof(fc.constantFrom(...SPECIAL_ANNOTATION_KEYS), qualifiedName),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  { maxKeys: 5 },
);

const ip = fc
  .tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 254 }))
  .map(([a, b]) => `10.201.${a}.${b}`);

/** Pod names as a user may write them in a targetRef: DNS names, long ones, and any text. */
const podName = fc.oneof(
  dnsLabel(63),
  shaped([...LOWER, ...DIGITS], [...LOWER, ...DIGITS, "-", "."], [...LOWER, ...DIGITS], 253),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 70 }),
);

const targetRef = fc.record(
  {
    kind: fc.constantFrom("Pod", "Pod", "Pod", "Node", "pod"),
    name: podName,
    namespace: dnsLabel(63),
    uid: fc.uuid(),
    resourceVersion: fc.integer({ min: 1 }).map(String),
    fieldPath: fc.constant("spec.containers{c}"),
  },
  { requiredKeys: ["kind"] },
);

const address = fc.record(
  {
    ip,
    hostname: dnsLabel(63),
    targetRef,
  },
  { requiredKeys: ["ip"] },
);

const subset = fc
  .tuple(
    fc.array(address, { maxLength: 3 }),
    fc.array(address, { maxLength: 2 }),
    fc.uniqueArray(
      fc.record({
        name: dnsLabel(15),
        port: fc.integer({ min: 1, max: 65535 }),
        protocol: fc.constantFrom("TCP", "UDP", "SCTP"),
      }),
      { minLength: 1, maxLength: 3, selector: (p) => p.name },
    ),
  )
  .filter(([ready, notReady]) => ready.length + notReady.length > 0)
  .map(([ready, notReady, ports]): Subset => ({
    ...(ready.length > 0 ? { addresses: ready } : {}),
    ...(notReady.length > 0 ? { notReadyAddresses: notReady } : {}),
    ports,
  }));

/**
 * A generated entry. Names run from one character to 63, so many are hashed on the host; the
 * namespace leaves room for a suffix that makes it unique to one property run.
 */
export const entryArbitrary: fc.Arbitrary<Entry> = fc
  .record(
    {
      namespace: dnsLabel(50),
      // Most are long enough to be hashed on the host.
      name: fc.oneof(dnsLabel(63), dnsLabel(63, 40), dnsLabel(63, 40)),
      labels,
      annotations,
      subsets: fc.array(subset, { maxLength: 2 }),
    },
    { requiredKeys: ["namespace", "name"] },
  )
  .map((e) => ({
    why: "generated",
    ...e,
    // A controlled-by key would make vCluster skip the object; the fixed corpus covers that.
    ...(e.labels ? { labels: without(e.labels, "vcluster.loft.sh/controlled-by") } : {}),
    ...(e.annotations
      ? { annotations: without(e.annotations, "vcluster.loft.sh/controlled-by") }
      : {}),
  }));

function without(map: Record<string, string>, key: string): Record<string, string> {
  return Object.fromEntries(Object.entries(map).filter(([k]) => k !== key));
}
