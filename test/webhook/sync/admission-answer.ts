// The mutating webhooks' answers as the HTTPS tests read them: POST an AdmissionReview, check the
// HTTP status and the echoed uid, and apply the answer's JSONPatch to the object sent.

import assert from "node:assert/strict";
import fastJsonPatch from "fast-json-patch";
import { postJson } from "../../support/https-client.js";

type Json = Record<string, unknown>;

export interface AdmissionAnswer {
  allowed: boolean;
  patch?: string;
  warnings?: string[];
  status?: { code: number; message: string };
}

/** POSTs `body` to `url`; the answer, after checking it is a 200 that echoes the request's uid. */
export async function admit(url: string, body: Json): Promise<AdmissionAnswer> {
  const res = await postJson(url, body);
  assert.equal(res.status, 200, res.text);
  const r = res.json<{ response: AdmissionAnswer & { uid: string } }>().response;
  assert.equal(r.uid, (body.request as Json).uid);
  return r;
}

/** `original` with the answer's JSONPatch applied (a copy), or `original` when there is none. */
export function patched(original: Json, r: AdmissionAnswer): Json {
  if (!r.patch) return original;
  const ops = JSON.parse(Buffer.from(r.patch, "base64").toString("utf8"));
  return fastJsonPatch.applyPatch(structuredClone(original), ops).newDocument as Json;
}
