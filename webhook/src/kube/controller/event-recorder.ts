// Kubernetes Events (core/v1) about the objects the controller syncs, as client-go's legacy
// EventRecorder (tools/record) writes them, so `kubectl describe` and `kubectl get events` show
// them: named `<object name>.<hex nanoseconds>`, in the object's namespace ("default" for a
// cluster-scoped object), with source.component, firstTimestamp, lastTimestamp and count. A repeat
// of the same event (same object, type, reason and message) within 10 minutes PATCHes the
// existing Event's count and lastTimestamp instead of creating another, as client-go's
// EventCorrelator does; the memory of what was sent is kept in this process only, so after a
// restart the first repeat creates a new Event. As client-go's EventSourceObjectSpamFilter does,
// each object may have 25 events (new or repeats) in a burst and then one per 5 minutes; the rest
// are dropped, so a key failing in a tight retry loop cannot flood the API server. Recording never
// throws: an Event is a courtesy,
// and a failure to write one must not fail a sync. Log lines name the object, never its contents.

import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { StringDecoder } from "node:string_decoder";
import type { KubeResponse, RequestExtras } from "../../shared/transport.js";
import { TokenBucket } from "./work-queue.js";
import { isObject } from "../../shared/json.js";

/** An object of any kind, as JSON: the recorder reads only apiVersion, kind and metadata. */
export type KubeObject = Record<string, unknown>;

/** What the recorder needs of KubeTransport. */
export interface EventTransport {
  request(
    method: string,
    path: string,
    body?: unknown,
    extras?: RequestExtras,
  ): Promise<KubeResponse>;
}

export interface EventRecorderOptions {
  /** source.component and reportingComponent, e.g. "vgate-sync". */
  component: string;
  /** source.host and reportingInstance; the machine's hostname by default. */
  host?: string;
  log?: (msg: string, fields?: object) => void;
  /** The clock of the spam filter (tests). */
  now?: () => number;
}

export type EventType = "Normal" | "Warning";

/** core/v1 Event's limit on message (NoteLengthLimit), in bytes. */
export const MAX_MESSAGE_BYTES = 1024;
/** Repeats within this long update the existing Event (client-go's aggregation interval). */
const REPEAT_WINDOW_MS = 10 * 60 * 1000;
/** How many distinct events are remembered (client-go's maxLruCacheEntries). */
const MAX_REMEMBERED = 4096;
/** client-go's spam filter: per object, a burst of 25, refilled at one per 5 minutes. */
const SPAM_BURST = 25;
const SPAM_QPS = 1 / 300;
/** metav1.Time's wire form has whole seconds. */
const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

interface InvolvedObject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
}

interface Sent {
  namespace: string;
  name: string;
  count: number;
  /** When it was last written (ms). */
  at: number;
}

export class EventRecorder {
  private readonly host: string;
  private readonly sent = new Map<string, Sent>();
  /** Per object and type: the spam filter's token bucket. */
  private readonly buckets = new Map<string, TokenBucket>();
  /** Per event key, the recording in progress: repeats wait for it, so they patch, not create. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private lastNanos = 0n;

  private readonly now: () => number;

  constructor(
    private readonly transport: EventTransport,
    private readonly opts: EventRecorderOptions,
  ) {
    this.host = opts.host ?? hostname();
    this.now = opts.now ?? Date.now;
  }

  /** Records a Warning about `object`; never throws. */
  warning(object: KubeObject, reason: string, action: string, message: string): Promise<void> {
    return this.record(object, "Warning", reason, action, message);
  }

  /** Records a Normal event about `object`; never throws. */
  normal(object: KubeObject, reason: string, action: string, message: string): Promise<void> {
    return this.record(object, "Normal", reason, action, message);
  }

  /**
   * Records an event under a name of the caller's, once: an Event of that name already there (made
   * by another replica, or by this process before a restart) is "exists", and nothing is written.
   * For notices that must not repeat however often they are decided; no aggregation, but the
   * object's spam filter applies ("dropped"). Never throws.
   */
  async recordOnce(
    object: KubeObject,
    name: string,
    what: EventText,
  ): Promise<"created" | "exists" | "dropped" | "failed"> {
    const involved = involvedObject(object);
    const { apiVersion, kind, namespace, uid } = involved;
    if (
      !this.allowed(JSON.stringify([apiVersion, kind, namespace, involved.name, uid, what.type]))
    ) {
      return "dropped";
    }
    const text = { ...what, message: capBytes(what.message, MAX_MESSAGE_BYTES) };
    const event = this.newEvent(involved, text, Date.now(), name);
    const path = `/api/v1/namespaces/${encodeURIComponent(namespaceOf(involved))}/events`;
    try {
      const res = await this.transport.request("POST", path, event);
      if (res.status === 201 || res.status === 200) return "created";
      if (res.status === 409) return "exists";
      this.failed(involved, what.reason, `status ${res.status}`);
    } catch (err) {
      this.failed(involved, what.reason, `error: ${String(err)}`);
    }
    return "failed";
  }

  private record(
    object: KubeObject,
    type: EventType,
    reason: string,
    action: string,
    message: string,
  ): Promise<void> {
    const involved = involvedObject(object);
    const text = capBytes(message, MAX_MESSAGE_BYTES);
    // client-go's getEventKey: the object (not its resourceVersion), type, reason and message.
    const { apiVersion, kind, namespace, name, uid } = involved;
    const key = JSON.stringify([apiVersion, kind, namespace, name, uid, type, reason, text]);
    if (!this.allowed(JSON.stringify([apiVersion, kind, namespace, name, uid, type]))) {
      return Promise.resolve();
    }
    const previous = this.inFlight.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => this.send(key, involved, { type, reason, action, message: text }))
      .catch((err: unknown) => this.failed(involved, reason, `error: ${String(err)}`))
      .finally(() => {
        if (this.inFlight.get(key) === next) this.inFlight.delete(key);
      });
    this.inFlight.set(key, next);
    return next;
  }

  private async send(key: string, involved: InvolvedObject, what: EventText): Promise<void> {
    const now = Date.now();
    const seen = this.sent.get(key);
    if (seen && now - seen.at < REPEAT_WINDOW_MS) {
      const res = await this.patch(seen, now, what.message);
      if (res.status === 200)
        return this.remember(key, { ...seen, count: seen.count + 1, at: now });
      // The Event is gone (deleted, or expired by the API server's --event-ttl): create anew.
      if (res.status !== 404) return this.failed(involved, what.reason, `status ${res.status}`);
    }
    const event = this.newEvent(involved, what, now);
    const meta = event["metadata"] as { name: string; namespace: string };
    const path = `/api/v1/namespaces/${encodeURIComponent(meta.namespace)}/events`;
    const res = await this.transport.request("POST", path, event);
    if (res.status !== 201 && res.status !== 200) {
      return this.failed(involved, what.reason, `status ${res.status}`);
    }
    this.remember(key, { namespace: meta.namespace, name: meta.name, count: 1, at: now });
  }

  private patch(seen: Sent, now: number, message: string): Promise<KubeResponse> {
    const path =
      `/api/v1/namespaces/${encodeURIComponent(seen.namespace)}` +
      `/events/${encodeURIComponent(seen.name)}`;
    const body = { count: seen.count + 1, lastTimestamp: rfc3339(now), message };
    return this.transport.request("PATCH", path, body, {
      contentType: "application/merge-patch+json",
    });
  }

  private newEvent(
    involved: InvolvedObject,
    what: EventText,
    now: number,
    name = this.eventName(involved.name, now),
  ): KubeObject {
    return {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name, namespace: namespaceOf(involved) },
      involvedObject: { ...involved },
      reason: what.reason,
      message: what.message,
      type: what.type,
      action: what.action,
      source: { component: this.opts.component, host: this.host },
      reportingComponent: this.opts.component,
      reportingInstance: this.host,
      firstTimestamp: rfc3339(now),
      lastTimestamp: rfc3339(now),
      count: 1,
      eventTime: null,
    };
  }

  /** client-go's GenerateEventName: `<name>.<hex unix nanoseconds>`, unique in this process. */
  private eventName(objectName: string, now: number): string {
    let nanos = BigInt(now) * 1_000_000n;
    if (nanos <= this.lastNanos) nanos = this.lastNanos + 1n;
    this.lastNanos = nanos;
    const name = `${objectName}.${nanos.toString(16)}`;
    // A name that is not a DNS subdomain cannot be an Event's name: a UUID is, and is unique.
    return DNS_SUBDOMAIN.test(name) && name.length <= 253 ? name : randomUUID();
  }

  /** Takes a token of the object's spam filter; false when there is none left. */
  private allowed(spamKey: string): boolean {
    const bucket = this.buckets.get(spamKey) ?? new TokenBucket(SPAM_QPS, SPAM_BURST, this.now);
    remember(this.buckets, spamKey, bucket);
    if (bucket.reserve() === 0) return true;
    bucket.cancel();
    return false;
  }

  private remember(key: string, sent: Sent): void {
    remember(this.sent, key, sent);
  }

  private failed(involved: InvolvedObject, reason: string, why: string): void {
    this.opts.log?.("cannot record an event", {
      object: `${involved.kind} ${involved.namespace ? `${involved.namespace}/` : ""}${involved.name}`,
      reason,
      why,
    });
  }
}

/** Where an object's Events go: its namespace, and "default" for a cluster-scoped one (as kube). */
function namespaceOf(involved: InvolvedObject): string {
  return involved.namespace || "default";
}

export interface EventText {
  type: EventType;
  reason: string;
  action: string;
  message: string;
}

/** Sets `key` as the newest entry of a bounded map, dropping the oldest beyond MAX_REMEMBERED. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= MAX_REMEMBERED) break;
    map.delete(oldest);
  }
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The ObjectReference of an object, from its apiVersion, kind and metadata. */
function involvedObject(object: KubeObject): InvolvedObject {
  const meta = isObject(object["metadata"]) ? object["metadata"] : {};
  const str = (from: Record<string, unknown>, k: string) =>
    typeof from[k] === "string" ? (from[k] as string) : "";
  return {
    apiVersion: str(object, "apiVersion"),
    kind: str(object, "kind"),
    namespace: str(meta, "namespace"),
    name: str(meta, "name"),
    uid: str(meta, "uid"),
    resourceVersion: str(meta, "resourceVersion"),
  };
}

/** `text` cut to at most `max` bytes of UTF-8, never inside a character. */
export function capBytes(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  // The decoder holds back a partial character at the end instead of decoding it.
  return new StringDecoder("utf8").write(Buffer.from(text).subarray(0, max));
}
