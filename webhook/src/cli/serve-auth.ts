// The token and authorization webhooks of `vgate serve`, wired together: the key index follows the
// OwnedAccessKey watch cache, the activity recorder writes status.lastActivity in the background,
// the namespace cache maps scopes, and the two review routes answer from memory.

import type { ResourceIdentity } from "../shared/ownedaccesskey.js";
import { asKubeError } from "../shared/status.js";
import { ActivityRecorder, type ActivityStatus } from "../auth/activity.js";
import type { KeysByName, NamespaceLabels } from "../auth/contracts.js";
import { KeyIndex } from "../auth/key-index.js";
import { builtInRoles, MAX_ROLES_FILE_BYTES, parseRolesFile, type RoleSet } from "../auth/roles.js";
import { readTextFile } from "../config/read-file.js";
import { decodeSubjectAccessReview, reviewAccess } from "../auth/subject-access-review.js";
import { decodeTokenReview, reviewToken } from "../auth/token-review.js";
import type { ChangeType } from "../kube/controller/watch-cache.js";
import type { Review } from "../server/review-routes.js";
import type { Logger } from "../server/logger.js";
import { previousKeyLabel, type Metrics } from "../server/metrics.js";
import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import { CliError } from "./errors.js";
import type { AuthOptions } from "./serve-options.js";

/** What the auth side needs of the API client (kube/api-client.ts); absent in --dev. */
export interface AuthApi {
  accessKeyView(): KeysByName;
  namespaceView(): NamespaceLabels;
  patchAccessKeyStatus(
    name: string,
    status: ActivityStatus,
    resourceVersion?: string,
  ): Promise<"written" | "gone" | "conflict">;
}

export interface AuthRuntime {
  /** Whether the key cache has synced: reviews and the duplicate-key check are answered only then. */
  synced(): boolean;
  /**
   * Whether the namespace cache has synced: scoped keys are decided from its labels, so a replica
   * without it refuses every scoped request (fail closed) and must not be Ready. A kube-apiserver
   * restart breaks both watches, and their relists back off independently.
   */
  namespacesSynced(): boolean;
  /** Feeds the key index; give it to the API client's onAccessKeyChange. */
  onAccessKeyChange(type: ChangeType, name: string): void;
  /** Names other keys stored with the same key (the validating webhook refuses duplicates). */
  namesWithSameKey(stored: string): string[];
  /** Starts the background writer, once the API client exists. */
  connect(api: AuthApi | null): void;
  reviews: Record<string, Review>;
  close(): Promise<void>;
}

const NEVER_SYNCED: KeysByName & NamespaceLabels = {
  synced: () => false,
  get: () => undefined,
  labels: () => undefined,
};

/** Reads and checks --roles-file; a bad file stops start-up with the reason. */
export async function loadRoles(opts: AuthOptions, groupDomain: string): Promise<RoleSet> {
  if (!opts.rolesFile) return builtInRoles(groupDomain);
  let text: string;
  try {
    text = await readTextFile(
      opts.rolesFile,
      MAX_ROLES_FILE_BYTES,
      `--roles-file ${opts.rolesFile}`,
    );
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
  try {
    return parseRolesFile(text, groupDomain);
  } catch (err) {
    throw new CliError(`--roles-file ${opts.rolesFile}: ${asKubeError(err).message}`);
  }
}

/** How status.lastActivity is written (serve-options.ts); the recorder's defaults when omitted. */
export interface ActivityTiming {
  writeIntervalMs?: number | undefined;
  flushIntervalMs?: number | undefined;
}

export function createAuth(
  opts: AuthOptions,
  identity: ResourceIdentity,
  roles: RoleSet,
  logger: Logger,
  activity: ActivityTiming = {},
  metrics?: Pick<Metrics, "logins" | "activityWrites" | "previousKeyLogins">,
): AuthRuntime {
  const logins = metrics?.logins;
  const previousKeyNames = new Set<string>();
  const groupDomain = identity.group.replace(/^management\./, "");
  let keys: KeysByName = NEVER_SYNCED;
  let namespaces: NamespaceLabels = NEVER_SYNCED;
  const index = new KeyIndex({ synced: () => keys.synced(), get: (n) => keys.get(n) });
  let recorder: ActivityRecorder | undefined;

  const tokenDeps = {
    index,
    groupDomain,
    audiences: opts.audiences,
    now: Date.now,
    localLastActivity: (name: string) => recorder?.latest(name),
    recordActivity: (key: OwnedAccessKey, at: number, weak: boolean, previous: boolean) =>
      recorder?.record(key, at, weak, previous),
  };
  const authenticate: Review = (body) => {
    const req = decodeTokenReview(body);
    try {
      const answer = reviewToken(req, tokenDeps);
      if (answer.log.login) logins?.inc({ result: answer.log.login });
      if (answer.log.previousKey) {
        const name = previousKeyLabel(previousKeyNames, answer.log.key ?? "");
        metrics?.previousKeyLogins.inc({ name });
      }
      return answer;
    } catch (err) {
      logins?.inc({ result: "unavailable" });
      throw err;
    }
  };
  const authorize: Review = (body) =>
    reviewAccess(decodeSubjectAccessReview(body), {
      keys,
      namespaces,
      groupDomain,
      clusterName: opts.clusterName,
      projectLabel: opts.projectLabel,
      virtualClusterLabel: opts.virtualClusterLabel,
      roles,
      now: Date.now,
      localLastActivity: (name) => recorder?.latest(name),
    });

  return {
    onAccessKeyChange: (type, name) => {
      index.apply(type, name);
      if (type === "DELETED") recorder?.forget(name);
    },
    synced: () => keys.synced(),
    namespacesSynced: () => namespaces.synced(),
    namesWithSameKey: (stored) => index.namesWithSameKey(stored),
    connect: (api) => {
      if (!api) return;
      keys = api.accessKeyView();
      namespaces = api.namespaceView();
      recorder = new ActivityRecorder(
        (name, status, resourceVersion) => api.patchAccessKeyStatus(name, status, resourceVersion),
        keys,
        {
          minIntervalMs: activity.writeIntervalMs,
          flushIntervalMs: activity.flushIntervalMs,
          onOutcome: (result) => metrics?.activityWrites.inc({ result }),
          onError: (name, err) =>
            logger.warn(
              { key: name, err: asKubeError(err).message },
              "cannot record the last activity of an access key; retrying at the next flush",
            ),
        },
      );
      recorder.start();
    },
    reviews: { "/authenticate": authenticate, "/authorize": authorize },
    close: async () => {
      await recorder?.stop();
    },
  };
}
