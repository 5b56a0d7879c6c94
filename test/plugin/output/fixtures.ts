// OwnedAccessKeys as the API server returns them, for the printer tests. Times are fixed and NOW
// is fixed, so tables are stable.

export const NOW = Date.parse("2026-03-10T12:00:00Z");
export const KIND_GROUP = "ownedaccesskey.management.loft.sh";

type Key = Record<string, unknown>;

function key(name: string, created: string, spec: Key, extra: Key = {}): Key {
  return {
    apiVersion: "management.loft.sh/v1",
    kind: "OwnedAccessKey",
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: "1000",
      creationTimestamp: created,
      labels: { b: "2" },
      ...((extra["metadata"] as Key | undefined) ?? {}),
    },
    spec,
    ...(extra["status"] ? { status: extra["status"] } : {}),
  };
}

/** A CI key: 30-day TTL, project and virtual-cluster scope, a plain key. */
export const ciKey = key(
  "ci-deploy",
  "2026-03-01T12:00:00Z",
  {
    displayName: "CI deploy",
    description: "Deploys from the pipeline",
    user: "alice",
    type: "User",
    key: "plain-secret-key-ci-0123456789abcdefghijklmnopqrstu",
    ttl: 2592000,
    groups: ["ci", "deployers"],
    scope: {
      projects: [{ project: "dev" }],
      virtualClusters: [{ project: "dev", virtualCluster: "vc1" }],
    },
  },
  { status: { lastActivity: "2026-03-10T11:55:00Z" } },
);

/** Expired an hour ago: 1-day TTL counted from its last activity. */
export const idleKey = key(
  "idle",
  "2026-02-01T00:00:00Z",
  {
    displayName: "Idle\nsecond line",
    user: "bob",
    type: "User",
    key: "sha256:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
    ttl: 86400,
    ttlAfterLastActivity: true,
    disabled: true,
  },
  { status: { lastActivity: "2026-03-09T11:00:00Z" } },
);

/** A team key without TTL, disabled, with a wide scope and no display name. */
export const teamKey = key("team-platform", "2025-01-15T08:30:00Z", {
  team: "platform",
  type: "Other",
  key: "plain-secret-key-team-abcdefghijklmnopqrstuvwxyz012345",
  disabled: true,
  groups: ["loft:system:metrics-writers"],
  scope: {
    roles: [{ role: "metrics-writer" }],
    clusters: [{ cluster: "*" }],
    spaces: [{ project: "p1", space: "s1" }],
    projects: [{ project: "p1" }, { project: "p2" }],
  },
});

/** Created seconds ago by the mutating webhook's defaults; a subject owner. */
export const freshKey = key("fresh-x7k2q", "2026-03-10T11:59:15Z", {
  subject: "loft:metrics-writer:p-default:my-vcluster",
  type: "Other",
  key: "plain-secret-key-fresh-zyxwvutsrqponmlkjihgfedcba9876",
  ttl: 5400,
});

export const ALL_KEYS = [ciKey, idleKey, teamKey, freshKey];

/** Every spec.key of the fixtures: none may appear in a table, describe or error. */
export const SECRETS = ALL_KEYS.map((k) => (k["spec"] as { key: string }).key);
