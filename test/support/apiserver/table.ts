// Server-side printing: when a client asks for `application/json;as=Table;v=v1;g=meta.k8s.io`
// (kubectl get does), a get or list answer becomes a meta.k8s.io/v1 Table. Custom resources use
// their CRD's additionalPrinterColumns (apiextensions' tableconvertor), a few built-ins kube's own
// printers, everything else kube's DefaultTableConvertor (Name, Created At).

import {
  apiVersionOf,
  type PrinterColumn,
  type ResourceRegistry,
  type ResourceType,
} from "./resources.js";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const obj = (v: unknown): Json => (isObject(v) ? v : {});

export interface TableColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** Whether the Accept header asks for a meta.k8s.io/v1 Table. */
export function wantsTable(accept: string | undefined): boolean {
  return (accept ?? "").split(",").some((part) => {
    const params = new Set(part.split(";").map((p) => p.trim().replace(/\s+/g, "")));
    return params.has("as=Table") && params.has("g=meta.k8s.io") && params.has("v=v1");
  });
}

/**
 * The Table for a get or list answer, or the body unchanged when it is neither (a Status, a
 * discovery document, a review). `includeObject` is the query parameter (Metadata by default).
 */
export function asTable(
  registry: ResourceRegistry,
  body: unknown,
  includeObject = "Metadata",
  now = new Date(),
): unknown {
  if (!isObject(body) || typeof body["kind"] !== "string" || body["kind"] === "Status") return body;
  const apiVersion = String(body["apiVersion"] ?? "");
  const isList = Array.isArray(body["items"]) && body["kind"].endsWith("List");
  const kind = isList ? body["kind"].slice(0, -"List".length) : body["kind"];
  const type = registry.lookup(apiVersion, kind);
  if (!type || !type.verbs.includes("get")) return body;
  const items = isList ? (body["items"] as unknown[]).map(obj) : [body];
  const printer = printerFor(type);
  const meta = obj(body["metadata"]);
  const listMeta: Json = { resourceVersion: meta["resourceVersion"] ?? "" };
  if (meta["continue"]) listMeta["continue"] = meta["continue"];
  if (meta["remainingItemCount"] !== undefined)
    listMeta["remainingItemCount"] = meta["remainingItemCount"];
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: listMeta,
    columnDefinitions: printer.columns,
    rows: items.map((item) => ({
      cells: printer.cells(item, now),
      object: rowObject(item, includeObject),
    })),
  };
}

function rowObject(item: Json, includeObject: string): unknown {
  if (includeObject === "None") return null;
  if (includeObject === "Object") return item;
  return {
    kind: "PartialObjectMetadata",
    apiVersion: "meta.k8s.io/v1",
    metadata: item["metadata"],
  };
}

interface Printer {
  columns: TableColumn[];
  cells(item: Json, now: Date): unknown[];
}

const column = (name: string, type = "string", priority = 0, format = ""): TableColumn => ({
  name,
  type,
  format,
  description: DESCRIPTIONS[name] ?? name,
  priority,
});

const DESCRIPTIONS: Record<string, string> = {
  Name: "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
  "Created At":
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
  Age: "CreationTimestamp is a timestamp representing the server time when this object was created.",
};

const NAME = column("Name", "string", 0, "name");

function printerFor(type: ResourceType): Printer {
  if (type.crd !== undefined) return crdPrinter(type.printerColumns ?? DEFAULT_CRD_COLUMNS);
  return (
    BUILTIN_PRINTERS[`${apiVersionOf(type.group, type.version)}/${type.kind}`] ?? defaultPrinter
  );
}

// ---- kube's DefaultTableConvertor ---------------------------------------------------------------

const defaultPrinter: Printer = {
  columns: [NAME, column("Created At", "date")],
  cells: (item) => [name(item), String(obj(item["metadata"])["creationTimestamp"] ?? "")],
};

// ---- custom resources: additionalPrinterColumns -----------------------------------------------

// A CRD without printer columns gets an Age column (apiextensions' defaulting).
const DEFAULT_CRD_COLUMNS: PrinterColumn[] = [
  { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
];

function crdPrinter(columns: PrinterColumn[]): Printer {
  return {
    columns: [
      NAME,
      ...columns.map((c) => ({
        name: c.name,
        type: c.type,
        format: c.format ?? "",
        description:
          c.description ?? `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
        priority: c.priority ?? 0,
      })),
    ],
    cells: (item, now) => [
      name(item),
      ...columns.map((c) => cellFor(c.type, simpleJsonPath(item, c.jsonPath), now)),
    ],
  };
}

/** apiextensions' cellForJSONValue; a string column prints what jsonpath prints. */
function cellFor(type: string, value: unknown, now: Date): unknown {
  if (value === undefined || value === null) return null;
  switch (type) {
    case "string":
      return typeof value === "string" ? value : JSON.stringify(value);
    case "integer":
      return typeof value === "number" ? Math.trunc(value) : null;
    case "number":
      return typeof value === "number" ? value : null;
    case "boolean":
      return typeof value === "boolean" ? value : null;
    case "date":
      return typeof value === "string" ? ageOf(value, now, "<invalid>") : null;
    default:
      return null;
  }
}

/** The simple JSONPaths CRD columns allow: `.a.b`, `.a[0].b`, `.a['x.y']`. */
export function simpleJsonPath(root: unknown, path: string): unknown {
  const parts = path.match(/\.[^.[\]]+|\[\d+\]|\['[^']*'\]|\["[^"]*"\]/g) ?? [];
  let value: unknown = root;
  for (const part of parts) {
    if (part.startsWith("[") && /^\[\d+\]$/.test(part)) {
      value = Array.isArray(value) ? value[Number(part.slice(1, -1))] : undefined;
    } else {
      const key = part.startsWith(".") ? part.slice(1) : part.slice(2, -2);
      value = isObject(value) ? value[key] : undefined;
    }
  }
  return value;
}

// ---- a few of kube's built-in printers (pkg/printers/internalversion) -------------------------

const AGE = column("Age");
const name = (item: Json): string => String(obj(item["metadata"])["name"] ?? "");
const age = (item: Json, now: Date): string =>
  ageOf(String(obj(item["metadata"])["creationTimestamp"] ?? ""), now, "<unknown>");
const count = (v: unknown): number => (isObject(v) ? Object.keys(v).length : 0);
const orNone = (s: string): string => (s === "" ? "<none>" : s);

const BUILTIN_PRINTERS: Record<string, Printer> = {
  "v1/Namespace": {
    columns: [NAME, column("Status"), AGE],
    cells: (i, now) => [name(i), String(obj(i["status"])["phase"] ?? ""), age(i, now)],
  },
  "v1/ConfigMap": {
    columns: [NAME, column("Data", "integer"), AGE],
    cells: (i, now) => [name(i), count(i["data"]) + count(i["binaryData"]), age(i, now)],
  },
  "v1/Secret": {
    columns: [NAME, column("Type"), column("Data", "integer"), AGE],
    cells: (i, now) => [name(i), String(i["type"] ?? ""), count(i["data"]), age(i, now)],
  },
  "v1/ServiceAccount": {
    columns: [NAME, column("Secrets", "integer"), AGE],
    cells: (i, now) => [
      name(i),
      Array.isArray(i["secrets"]) ? i["secrets"].length : 0,
      age(i, now),
    ],
  },
  "v1/Service": {
    columns: [
      NAME,
      column("Type"),
      column("Cluster-IP"),
      column("External-IP"),
      column("Port(s)"),
      AGE,
      column("Selector", "string", 1),
    ],
    cells: (i, now) => serviceCells(i, now),
  },
  "v1/Endpoints": {
    columns: [NAME, column("Endpoints"), AGE],
    cells: (i, now) => [name(i), endpointsText(i), age(i, now)],
  },
  "v1/Pod": {
    columns: [
      NAME,
      column("Ready"),
      column("Status"),
      column("Restarts", "string"),
      AGE,
      column("IP", "string", 1),
      column("Node", "string", 1),
    ],
    cells: (i, now) => podCells(i, now),
  },
  "coordination.k8s.io/v1/Lease": {
    columns: [NAME, column("Holder"), AGE],
    cells: (i, now) => [name(i), String(obj(i["spec"])["holderIdentity"] ?? ""), age(i, now)],
  },
  "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration": webhooksPrinter(),
  "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration": webhooksPrinter(),
};

function webhooksPrinter(): Printer {
  return {
    columns: [NAME, column("Webhooks", "integer"), AGE],
    cells: (i, now) => [
      name(i),
      Array.isArray(i["webhooks"]) ? i["webhooks"].length : 0,
      age(i, now),
    ],
  };
}

function serviceCells(i: Json, now: Date): unknown[] {
  const spec = obj(i["spec"]);
  const ports = Array.isArray(spec["ports"]) ? spec["ports"].map(obj) : [];
  const portText = ports
    .map(
      (p) =>
        `${String(p["port"])}${p["nodePort"] ? `:${String(p["nodePort"])}` : ""}/${String(p["protocol"] ?? "TCP")}`,
    )
    .join(",");
  const selector = Object.entries(obj(spec["selector"]))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(",");
  const external = Array.isArray(spec["externalIPs"]) ? spec["externalIPs"].join(",") : "";
  return [
    name(i),
    String(spec["type"] ?? "ClusterIP"),
    String(spec["clusterIP"] ?? "<none>"),
    orNone(external),
    orNone(portText),
    age(i, now),
    orNone(selector),
  ];
}

function endpointsText(i: Json): string {
  const out: string[] = [];
  for (const subset of Array.isArray(i["subsets"]) ? i["subsets"].map(obj) : []) {
    const ports = Array.isArray(subset["ports"]) ? subset["ports"].map(obj) : [];
    for (const a of Array.isArray(subset["addresses"]) ? subset["addresses"].map(obj) : []) {
      if (ports.length === 0) out.push(String(a["ip"]));
      for (const p of ports) out.push(`${String(a["ip"])}:${String(p["port"])}`);
    }
  }
  if (out.length === 0) return "<none>";
  return out.length > 3
    ? `${out.slice(0, 3).join(",")} + ${out.length - 3} more...`
    : out.join(",");
}

function podCells(i: Json, now: Date): unknown[] {
  const spec = obj(i["spec"]);
  const status = obj(i["status"]);
  const containers = Array.isArray(spec["containers"]) ? spec["containers"].length : 0;
  const statuses = Array.isArray(status["containerStatuses"])
    ? status["containerStatuses"].map(obj)
    : [];
  const ready = statuses.filter((s) => s["ready"] === true).length;
  const restarts = statuses.reduce((n, s) => n + (Number(s["restartCount"]) || 0), 0);
  return [
    name(i),
    `${ready}/${containers}`,
    String(status["reason"] ?? status["phase"] ?? "Pending"),
    String(restarts),
    age(i, now),
    String(status["podIP"] ?? "<none>"),
    String(spec["nodeName"] ?? "<none>"),
  ];
}

// ---- ages ---------------------------------------------------------------------------------------

function ageOf(timestamp: string, now: Date, invalid: string): string {
  if (!timestamp) return "<unknown>";
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return invalid;
  return humanDuration(now.getTime() - t);
}

/** apimachinery's duration.HumanDuration: `45s`, `3m20s`, `25m`, `5h3m`, `3d4h`, `2y10d`. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}
