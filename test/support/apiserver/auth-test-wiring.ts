// Test-only wiring of the review routes into a running emulator, until server.ts registers them
// itself (see reviewRoutes). It reaches the server's private router, so it lives with the tests.

import { authorizeRequest, type UserIdentity } from "./authorizer.js";
import type { TestApiServer } from "./index.js";
import { RBAC_V1 } from "./rbac.js";
import { resourceType } from "./resources.js";
import { reviewRoutes, type ReviewDeps } from "./reviews.js";
import type { Router } from "./router.js";
import type { ApiServerCore } from "./server.js";

interface Ctx {
  identity: UserIdentity;
  body: unknown;
}

export function coreOf(server: TestApiServer): ApiServerCore {
  return (server as unknown as { core: ApiServerCore }).core;
}

/** Registers the review routes (create-checked like every request) and the types they need. */
export function wireReviews(server: TestApiServer, deps: ReviewDeps): void {
  const core = coreOf(server);
  const router = (core as unknown as { router: Router<Ctx> }).router;
  for (const r of reviewRoutes(deps)) {
    router.add(r.method, r.pattern, async (ctx, params) => {
      const namespace = params["namespace"] ?? "";
      await authorizeRequest(deps.authorizer(), ctx.identity, { ...r.attributes, namespace });
      return r.handle(ctx.identity, ctx.body, namespace);
    });
  }
  ensureTypes(server);
}

/** The RBAC and review types, unless resources.ts registers them already. */
export function ensureTypes(server: TestApiServer): void {
  const types = [
    resourceType(RBAC_V1, "ClusterRole", "clusterroles", false),
    resourceType(RBAC_V1, "ClusterRoleBinding", "clusterrolebindings", false),
    resourceType(RBAC_V1, "Role", "roles", true),
    resourceType(RBAC_V1, "RoleBinding", "rolebindings", true),
    {
      ...resourceType("authentication.k8s.io/v1", "TokenReview", "tokenreviews", false),
      verbs: ["create"],
    },
    {
      ...resourceType("authentication.k8s.io/v1", "SelfSubjectReview", "selfsubjectreviews", false),
      verbs: ["create"],
    },
    {
      ...resourceType(
        "authorization.k8s.io/v1",
        "SelfSubjectRulesReview",
        "selfsubjectrulesreviews",
        false,
      ),
      verbs: ["create"],
    },
  ];
  for (const t of types) {
    if (!server.registry.byResource(t.group, t.version, t.resource)) server.registry.add(t);
  }
}
