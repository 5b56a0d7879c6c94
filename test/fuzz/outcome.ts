// What a fuzzed request got back, judged. Every answer must be an AdmissionReview, TokenReview or
// SubjectAccessReview of the route's kind (HTTP 200; an AdmissionReview echoes the request's uid,
// and a denial carries a 4xx status), or a 4xx metav1.Status whose code is the HTTP status; every
// Status has the reason Kubernetes gives its code. Anything else (a 5xx, a malformed answer, no
// answer within the deadline, a dropped connection) is a failure, and so is:
// - client certificates: /authenticate or /authorize answering a caller without kube-apiserver's
//   certificate with anything but 401 Unauthorized (405 for another method than POST, or a reset
//   connection: vgate closes it before the body is read; a look-alike CA's certificate may see
//   its connection reset on any route);
// - keys: an answer that shows a key vgate can tell is one (key-leaks.ts), a patch that does not
//   apply to the request's object, and, with hashed storage, an object that /validate admits after
//   /mutate admitted it (as kube-apiserver sends it next) that still holds such a key;
// - an unsynced key cache: a 5xx other than its documented 503, a login authenticated, a request
//   allowed by the authorization webhook, or a new key admitted by /validate;
// - a well-formed request whose answer is not what the README says (expectations.ts).
// An admitted /mutate answer yields the /validate request kube-apiserver would send next.

import type { Answer } from "../soak/timed-client.js";
import { expectation, type Expected } from "./expectations.js";
import { TRUSTED } from "./identities.js";
import { applyJsonPatch, PatchError } from "./json-patch.js";
import { keyShowing, keyShowingIn, knownKeys } from "./key-leaks.js";
import { hashed, LAST_APPLIED, MIN_KEY_LENGTH } from "./keys.js";
import type { FuzzInput } from "./mutations.js";

export interface Judged {
  /** "200 AdmissionReview", "400 Status", ... for the counts. */
  outcome: string;
  /** Why this answer is wrong; undefined when it is acceptable. */
  problem?: string;
  /** What the answer showed, for the counts (an expectation met, a key hashed, ...). */
  tags?: string[];
  /** An allowed /mutate answer: the object its patch made of the request's. */
  admitted?: Json;
  /** The request kube-apiserver sends after this answer: /validate with the admitted object. */
  next?: FuzzInput;
}

type Json = Record<string, unknown>;

const REVIEW_KIND: Record<string, string> = {
  "/validate/ownedaccesskeys": "AdmissionReview",
  "/mutate/ownedaccesskeys": "AdmissionReview",
  "/mutate/endpoints": "AdmissionReview",
  "/authenticate": "TokenReview",
  "/authorize": "SubjectAccessReview",
};

/** The routes only kube-apiserver's certificate may call. */
const REVIEW_ROUTES = new Set(["/authenticate", "/authorize"]);

/** The StatusReason kube gives each code (k8s.io/apimachinery/pkg/api/errors). */
const REASONS: Record<number, readonly string[]> = {
  400: ["BadRequest"],
  401: ["Unauthorized"],
  403: ["Forbidden"],
  404: ["NotFound"],
  405: ["MethodNotAllowed"],
  409: ["AlreadyExists", "Conflict"],
  410: ["Gone", "Expired"],
  413: ["RequestEntityTooLarge"],
  415: ["UnsupportedMediaType"],
  422: ["Invalid"],
  429: ["TooManyRequests"],
  503: ["ServiceUnavailable"],
};

/** A caller without kube-apiserver's certificate, on a route that answers only kube-apiserver. */
function isStranger(input: FuzzInput): boolean {
  return input.identity !== TRUSTED && REVIEW_ROUTES.has(input.route);
}

/** The message of vgate's 503 while its key cache has not synced (README, Key storage). */
const NOT_LOADED = /access keys are not loaded yet/;

/** `value` as JSON for a problem's text, cut at `max`; never throws (a value may be nested deep). */
function shown(value: unknown, max = 200): string {
  try {
    return String(JSON.stringify(value)).slice(0, max);
  } catch {
    return "(too deep to print)";
  }
}

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const field = (v: unknown, name: string): unknown =>
  isObject(v) && Object.hasOwn(v, name) ? v[name] : undefined;

export function judge(input: FuzzInput, answer: Answer): Judged {
  if (answer.error === "TIMEOUT")
    return { outcome: "hang", problem: "no answer within the deadline" };
  const reset = answer.error === "ECONNRESET" || answer.error === "EPIPE";
  if (reset && isStranger(input)) {
    // vgate refuses a stranger before it reads the body, and closes the connection at once: body
    // bytes that arrive after that make the kernel reset it, and the reset can overtake the 401.
    return { outcome: `connection reset, ${input.identity}`, tags: ["reset instead of 401"] };
  }
  if (reset && input.identity === "look-alike CA") {
    // A certificate whose issuer has the client CA's name but another key fails to verify, and
    // Node's TLS layer then drops about one such connection in 200 (ERR_SSL_EVP_LIB): on any route.
    return {
      outcome: `connection reset, ${input.identity}`,
      tags: ["reset by TLS: look-alike CA"],
    };
  }
  if (answer.error)
    return {
      outcome: "transport error",
      problem: `transport error ${answer.error} after ${Math.round(answer.ms)} ms, ${answer.writtenAt === undefined ? "before" : "after"} the request was written, on a ${answer.reused ? `reused connection, after ${answer.previous}` : "new connection"}`,
    };
  let body: Json;
  try {
    body = JSON.parse(answer.text) as Json;
  } catch {
    return {
      outcome: `${answer.status} not JSON`,
      problem: `HTTP ${answer.status}, not JSON: ${answer.text.slice(0, 120)}`,
    };
  }
  if (isStranger(input)) return judgeStranger(input, answer, body);
  // The request is parsed only when it is needed: a body can be megabytes, and most are refused.
  let parsed: Request | undefined;
  const request = () => (parsed ??= requestOf(input));
  const outcome = outcomeOf(answer.status, body);
  // Any planted key showing at all is rare; only then does it matter which ones vgate can know.
  if (keyShowing(answer.text, input.keys)) {
    const showing = keyShowing(answer.text, request().secrets);
    if (showing) return { outcome, problem: `the answer shows ${showing}` };
  }
  const judged =
    answer.status === 200
      ? judgeReview(input, body, request())
      : judgeStatus(input, answer.status, body);
  if (judged.problem || !input.wellFormed) return judged;
  return meetsExpectation(judged, expectation(input, request().parsed), answer.status, body);
}

function outcomeOf(status: number, body: Json): string {
  if (status !== 200) return `${status} ${String(body.kind)}`;
  const response = field(body, "response");
  if (!isObject(response)) return `200 ${String(body.kind)}`;
  if (response.allowed === true) return "200 AdmissionReview allowed";
  return `200 AdmissionReview denied ${String(field(response.status, "code"))}`;
}

/** A caller without kube-apiserver's certificate on a review route: refused, and nothing else. */
function judgeStranger(input: FuzzInput, answer: Answer, body: Json): Judged {
  const outcome = `${answer.status} ${String(body.kind)}, ${input.identity}`;
  const refused = (code: number, reason: string) =>
    answer.status === code && isStatus(body, code) && body.reason === reason;
  if (refused(401, "Unauthorized"))
    return { outcome, tags: [`certificate refused: ${input.identity}`] };
  if (input.method !== "POST" && refused(405, "MethodNotAllowed")) return { outcome };
  const what = answer.status === 200 ? "a review" : `HTTP ${answer.status}`;
  return {
    outcome,
    problem: `${input.route} answered a caller with ${input.identity} with ${what}, not 401 Unauthorized: ${answer.text.slice(0, 200)}`,
  };
}

function isStatus(body: Json, code: number): boolean {
  return (
    body.kind === "Status" &&
    body.apiVersion === "v1" &&
    body.status === "Failure" &&
    body.code === code &&
    typeof body.message === "string"
  );
}

/** A Status answer: 4xx with kube's reason, or the unsynced vgate's documented 503. */
function judgeStatus(input: FuzzInput, status: number, body: Json): Judged {
  const outcome = `${status} ${String(body.kind)}`;
  if (!isStatus(body, status))
    return {
      outcome,
      problem: `a ${status} that is not a metav1.Status: ${shown(body)}`,
    };
  const notLoaded =
    status === 503 &&
    input.target === "unsynced" &&
    REVIEW_ROUTES.has(input.route) &&
    NOT_LOADED.test(String(body.message));
  if ((status < 400 || status >= 500) && !notLoaded)
    return { outcome, problem: `HTTP ${status}: ${shown(body)}` };
  return (
    reasonProblem(outcome, status, body.reason) ?? {
      outcome,
      ...(notLoaded ? { tags: ["not loaded (503)"] } : {}),
    }
  );
}

function reasonProblem(outcome: string, code: number, reason: unknown): Judged | undefined {
  const known = REASONS[code];
  if (!known || known.includes(String(reason))) return undefined;
  return {
    outcome,
    problem: `code ${code} with reason ${shown(reason)}, not ${known.join(" or ")}`,
  };
}

/** The request body as the judge reads it (JSON.parse, as vgate does). */
interface Request {
  parsed: unknown;
  /** request of an AdmissionReview; undefined for other bodies. */
  admission: Json | undefined;
  /** The planted keys vgate can tell are keys here (key-leaks.ts): none of them may show. */
  secrets: string[];
}

function requestOf(input: FuzzInput): Request {
  let parsed: unknown;
  try {
    parsed = JSON.parse(input.body.toString("utf8"));
  } catch {
    return { parsed: undefined, admission: undefined, secrets: [] };
  }
  const admission = field(parsed, "request");
  // What follows an admitted /mutate keeps the keys its request was known to hold.
  const secrets = input.admitted ? input.keys : knownKeys(input.target, input.keys, parsed);
  return { parsed, admission: isObject(admission) ? admission : undefined, secrets };
}

function judgeReview(input: FuzzInput, body: Json, request: Request): Judged {
  const kind = REVIEW_KIND[input.route]!;
  const outcome = outcomeOf(200, body);
  if (body.kind !== kind)
    return { outcome, problem: `HTTP 200 but kind ${String(body.kind)}, not ${kind}` };
  if (kind !== "AdmissionReview") {
    const status = field(body, "status");
    const name = kind === "TokenReview" ? "authenticated" : "allowed";
    if (typeof field(status, name) !== "boolean") return { outcome, problem: `no status.${name}` };
    if (input.target === "unsynced" && field(status, name) === true)
      return { outcome, problem: `status.${name} is true while the access keys are not loaded` };
    return { outcome };
  }
  const response = field(body, "response");
  if (typeof field(response, "allowed") !== "boolean")
    return { outcome, problem: "no response.allowed" };
  const sentUid = field(request.admission, "uid");
  if (field(response, "uid") !== sentUid)
    return {
      outcome,
      problem: `response.uid ${shown(field(response, "uid"))} is not the request's ${shown(sentUid)}`,
    };
  return field(response, "allowed") === true
    ? judgeAllowed(input, response as Json, request)
    : judgeDenied(input, outcome, field(response, "status"));
}

function judgeDenied(input: FuzzInput, outcome: string, status: unknown): Judged {
  const code = field(status, "code");
  if (typeof code !== "number")
    return { outcome, problem: `a denial without status.code: ${shown(status)}` };
  const notLoaded =
    code === 503 &&
    input.target === "unsynced" &&
    input.route === "/validate/ownedaccesskeys" &&
    NOT_LOADED.test(String(field(status, "message")));
  if ((code < 400 || code >= 500) && !notLoaded)
    return { outcome, problem: `denied with code ${code}: ${shown(status)}` };
  return (
    reasonProblem(outcome, code, field(status, "reason")) ?? {
      outcome,
      ...(notLoaded ? { tags: ["new key refused (503)"] } : {}),
    }
  );
}

/** An admission answer that allows: its patch applies, and what it admits keeps keys secret. */
function judgeAllowed(input: FuzzInput, response: Json, request: Request): Judged {
  const outcome = "200 AdmissionReview allowed";
  const object = field(request.admission, "object");
  let admitted = object;
  const patch = field(response, "patch");
  if (patch !== undefined) {
    try {
      const ops: unknown = JSON.parse(Buffer.from(String(patch), "base64").toString("utf8"));
      admitted = applyJsonPatch(object, ops);
    } catch (err) {
      const why = err instanceof PatchError ? err.message : "not base64 JSON";
      return { outcome, problem: `the patch does not apply to the request's object: ${why}` };
    }
  }
  const tags: string[] = [];
  if (input.route === "/validate/ownedaccesskeys") {
    if (input.target === "unsynced" && setsNewKey(request.admission))
      return { outcome, problem: "a new key admitted while the access keys are not loaded" };
    if (input.target === "hashed" && input.admitted) {
      // A stored key shorter than MIN_KEY_LENGTH keeps working, but vgate does not look for its
      // copies: too short a string would be found in too much (README, Key storage).
      const lookedFor = request.secrets.filter(
        (k) => k.length >= MIN_KEY_LENGTH || !storedKeyOf(request.admission, k),
      );
      const showing = keyShowingIn(object, lookedFor);
      if (showing)
        return { outcome, problem: `hashed storage admitted an object that holds ${showing}` };
      tags.push("admitted object holds no plaintext key");
    }
    return { outcome, tags };
  }
  if (input.route !== "/mutate/ownedaccesskeys" || !isObject(admitted)) return { outcome };
  if (input.target === "hashed" && keyShowingIn(admitted, request.secrets)) {
    tags.push("plaintext key left for /validate");
  }
  return { outcome, tags, admitted, next: validateNext(input, request, admitted) };
}

/** The /validate request kube-apiserver sends once /mutate admitted `admitted`. */
function validateNext(input: FuzzInput, request: Request, admitted: Json): FuzzInput | undefined {
  const operation = field(request.admission, "operation");
  if (operation !== "CREATE" && operation !== "UPDATE") return undefined;
  const body = { ...(request.parsed as Json), request: { ...request.admission, object: admitted } };
  let text: string;
  try {
    text = JSON.stringify(body);
  } catch {
    return undefined;
  }
  // The keys known in the request stay known, but a short one only where this body has it as a
  // plaintext spec.key: by its hash, vgate looks for keys of MIN_KEY_LENGTH or more.
  const kept = request.secrets.filter((k) => k.length >= MIN_KEY_LENGTH);
  const keys = [...new Set([...kept, ...knownKeys(input.target, input.keys, body)])];
  return {
    ...input,
    from: `${input.from}, admitted by /mutate`,
    keys,
    identity: TRUSTED,
    route: "/validate/ownedaccesskeys",
    method: "POST",
    contentType: "application/json",
    body: Buffer.from(text, "utf8"),
    admitted: true,
  };
}

/**
 * Whether an admission request sets a key its stored object does not have (a CREATE with one, or
 * a rotation): a key and its sha256:<hex> are the same key.
 */
export function setsNewKey(admission: Json | undefined): boolean {
  const operation = field(admission, "operation");
  if (operation !== "CREATE" && operation !== "UPDATE") return false;
  const key = field(field(field(admission, "object"), "spec"), "key");
  if (typeof key !== "string" || key === "") return false;
  const old = field(field(field(admission, "oldObject"), "spec"), "key");
  if (typeof old !== "string" || old === "") return true;
  return digestOf(key) !== digestOf(old);
}

/** Whether `key` is the stored object's key (oldObject's spec.key, plaintext or hashed). */
function storedKeyOf(admission: Json | undefined, key: string): boolean {
  const old = field(field(field(admission, "oldObject"), "spec"), "key");
  return typeof old === "string" && digestOf(old) === digestOf(key);
}

function digestOf(key: string): string {
  return /^sha256:[0-9a-f]{64}$/.test(key) ? key : hashed(key);
}

/** The judged answer checked against what the README says a well-formed request gets. */
function meetsExpectation(
  judged: Judged,
  expected: Expected | undefined,
  status: number,
  body: Json,
): Judged {
  // Too busy is an answer a well-behaved caller retries; it says nothing about the request.
  if (!expected || status === 429) return judged;
  const response = field(body, "response");
  const got = field(response, "status");
  const wrong = (what: string): Judged => ({
    ...judged,
    problem: `expected ${describeExpected(expected)} (${expected.tag}), got ${what}: ${shown(body, 300)}`,
  });
  const tagged = (): Judged => ({ ...judged, tags: [...(judged.tags ?? []), expected.tag] });
  switch (expected.answer) {
    case "status":
      return status === expected.code && body.reason === expected.reason
        ? tagged()
        : wrong(`HTTP ${status}`);
    case "denied": {
      if (status !== 200 || field(response, "allowed") !== false) return wrong(judged.outcome);
      if (field(got, "code") !== expected.code || field(got, "reason") !== expected.reason)
        return wrong(`code ${String(field(got, "code"))} ${String(field(got, "reason"))}`);
      const causes = field(field(got, "details"), "causes");
      const fields = Array.isArray(causes) ? causes.map((c) => field(c, "field")) : [];
      if (expected.field && !fields.includes(expected.field))
        return wrong(`no cause on ${expected.field}`);
      return tagged();
    }
    case "allowed": {
      if (status !== 200 || field(response, "allowed") !== true) return wrong(judged.outcome);
      return expected.key === undefined
        ? tagged()
        : hashedAsExpected(judged, expected, tagged, wrong);
    }
  }
}

/** spec.key, and the one in last-applied-configuration, of the admitted object are as expected. */
function hashedAsExpected(
  judged: Judged,
  expected: Extract<Expected, { answer: "allowed" }>,
  tagged: () => Judged,
  wrong: (what: string) => Judged,
): Judged {
  const object = judged.admitted;
  const key = field(field(object, "spec"), "key");
  if (key !== expected.key) return wrong(`spec.key ${shown(key)} after the patch`);
  if (expected.lastApplied === undefined) return tagged();
  const text = field(field(field(object, "metadata"), "annotations"), LAST_APPLIED);
  let applied: unknown;
  try {
    applied = JSON.parse(String(text));
  } catch {
    return wrong(`${LAST_APPLIED} that is no JSON after the patch`);
  }
  const appliedKey = field(field(applied, "spec"), "key");
  if (appliedKey !== expected.lastApplied)
    return wrong(`${LAST_APPLIED} with spec.key ${shown(appliedKey)} after the patch`);
  return tagged();
}

function describeExpected(e: Expected): string {
  if (e.answer === "status") return `a ${e.code} ${e.reason} Status`;
  if (e.answer === "denied")
    return `a denial ${e.code} ${e.reason}${e.field ? ` on ${e.field}` : ""}`;
  return e.key ? `an allowed answer with spec.key ${e.key}` : "an allowed answer";
}
