// The reconciler's reads (ReconcileDeps.get and .list) through the two API servers: references are
// read live, not from a cache, as vCluster's syncer reads them.

import { answerError } from "../../shared/answer-error.js";
import { parseList } from "../../kube/watch-cache.js";
import type { JsonObject } from "../../patches/types.js";
import type { ObjectRef, ReconcileDeps, Side } from "./contracts.js";
import type { Sides } from "./apply-plan.js";

const PAGE = 500;

export function clusterReads(sides: Sides): Pick<ReconcileDeps, "get" | "list"> {
  return {
    async get(side: Side, ref: ObjectRef): Promise<JsonObject | null> {
      const { transport, paths } = sides[side];
      const res = await transport.request("GET", await paths.object(ref));
      if (res.status === 404) return null;
      if (res.status !== 200) throw answerError(res);
      return res.body as JsonObject;
    },
    async list(side, apiVersion, kind, namespace): Promise<JsonObject[]> {
      const { transport, paths } = sides[side];
      const collection = await paths.collection(apiVersion, kind, namespace);
      const items: JsonObject[] = [];
      let next = "";
      do {
        const query = `?limit=${PAGE}${next ? `&continue=${encodeURIComponent(next)}` : ""}`;
        const res = await transport.request("GET", collection + query);
        if (res.status !== 200) throw answerError(res);
        const page = parseList(res);
        if (typeof page === "string") throw new Error(page);
        items.push(...(page.items as JsonObject[]));
        next = page.continue;
      } while (next);
      return items;
    },
  };
}
