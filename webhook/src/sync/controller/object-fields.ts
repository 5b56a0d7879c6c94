// Reading plain JSON objects of unknown shape (API objects, configs) without trusting them: a
// field that is missing or of another type reads as empty, and only own keys count.

import type { Json, JsonObject } from "../../patches/types.js";
import { isObject } from "../../shared/json.js";

export { isObject };

/** The object at `key`, or {} when it is missing or no object. */
export function field(obj: JsonObject, key: string): JsonObject {
  const v = Object.hasOwn(obj, key) ? obj[key] : undefined;
  return isObject(v) ? v : {};
}

/** The string, or "" for anything else. */
export const str = (v: Json | undefined): string => (typeof v === "string" ? v : "");
