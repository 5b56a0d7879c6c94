// kubectl accesskey create [NAME]: the plugin makes the key (docs/decisions.md OAK-8: 256 bits from a
// CSPRNG, base64url) and sends it, or only its hash when vgate stores keys hashed (stored-key.ts).
// The key goes to stdout exactly once; everything else goes to stderr, so KEY=$(… create ci) works.
// -o and --dry-run as kubectl create has them (docs/decisions.md OAK-37): the object printed is
// masked as every printed object is (OAK-33), so a -o that would not show the key needs somewhere
// else to keep it, or the key would be lost: --show-key (spec.key holds the key itself, also where
// the server stores its hash) or --kubeconfig-out. A dry run stores nothing, so it needs neither.

import { generateAccessKey } from "../../../webhook/src/shared/key-generation.js";
import type { Command, CommandContext } from "../cli/command.js";
import { dryRunSuffix, parseDryRun, type DryRun } from "../cli/dry-run.js";
import { CliError, errorLine } from "../cli/errors.js";
import type { OutputFormat } from "../output/format.js";
import { keyKubeconfig } from "../keys/kubeconfig-file.js";
import { SecretFile } from "../keys/secret-file.js";
import { keyToSend } from "../keys/stored-key.js";
import type { KubeObject } from "../kube/api.js";
import { isJsonObject } from "../output/go-values.js";
import { keyForms } from "../output/mask.js";
import { escapeTerminal } from "../output/terminal-text.js";
import { parseTtl } from "../keys/ttl.js";

export const command: Command = {
  name: "create",
  summary: "Create an access key and print it once",
  usage: "create [NAME | --generate-name PREFIX] [flags]",
  description: `Create an OwnedAccessKey. The plugin generates the key (256 random bits, URL-safe) and
prints it once on standard output; the name of the new key goes to standard error.
In this command --cluster and --user describe the key (a scope cluster, the owner);
choose the kubeconfig's cluster and user with --context.`,
  examples: `# Create a key and keep it in a variable
KEY=$(kubectl accesskey create ci)

# A key for a pipeline, valid 30 days, limited to one project, with a ready kubeconfig
kubectl accesskey create deploy --ttl 30d --project web --kubeconfig-out deploy.kubeconfig

# A key that expires after 12 hours without use, with a generated name
kubectl accesskey create --generate-name ci- --ttl 12h --ttl-after-last-activity

# Check with the server (vgate's webhooks included) that the key would be accepted; nothing is stored
kubectl accesskey create deploy --project web --dry-run=server -o yaml

# The created object as JSON, the key in spec.key
kubectl accesskey create ci -o json --show-key`,
  options: {
    "generate-name": { type: "string" },
    "display-name": { type: "string" },
    description: { type: "string" },
    ttl: { type: "string" },
    "ttl-after-last-activity": { type: "boolean" },
    project: { type: "string", multiple: true },
    space: { type: "string", multiple: true },
    "virtual-cluster": { type: "string", multiple: true },
    cluster: { type: "string", multiple: true },
    role: { type: "string", multiple: true },
    group: { type: "string", multiple: true },
    user: { type: "string" },
    team: { type: "string" },
    subject: { type: "string" },
    "kubeconfig-out": { type: "string" },
    output: { type: "string", short: "o" },
    "show-key": { type: "boolean" },
    "dry-run": { type: "string" },
  },
  flagHelp: [
    { flag: "--generate-name=''", text: "A name prefix; the server adds 5 random characters" },
    { flag: "--display-name=''", text: "The name shown in UIs (default: the key's name)" },
    { flag: "--description=''", text: "Free text" },
    { flag: "--ttl=''", text: "Lifetime: 90s, 30m, 12h, 30d, 2w (none: never expires)" },
    { flag: "--ttl-after-last-activity=false", text: "Count the lifetime from the key's last use" },
    { flag: "--project=[]", text: "Limit the key to a project, repeatable ('*': all)" },
    { flag: "--space=[]", text: "Limit the key to PROJECT/SPACE, repeatable" },
    { flag: "--virtual-cluster=[]", text: "Limit the key to PROJECT/NAME, repeatable" },
    { flag: "--cluster=[]", text: "Limit the key to a cluster, repeatable" },
    { flag: "--role=[]", text: "A scope role (e.g. vcluster, loft-cli), repeatable" },
    { flag: "--group=[]", text: "A group added when the key is used, repeatable (admins)" },
    { flag: "--user=''", text: "The owner (default: you; another user needs admin rights)" },
    { flag: "--team=''", text: "A team owns the key (admins)" },
    { flag: "--subject=''", text: "A generic subject owns the key (admins)" },
    {
      flag: "--kubeconfig-out=''",
      text: "Also write a kubeconfig that logs in with the key to this file (mode 0600)",
    },
    {
      flag: "-o, --output=''",
      text: "json|yaml|name|jsonpath=…: print the created key's object (default: the key alone)",
    },
    {
      flag: "--show-key=false",
      text: "With -o json|yaml|jsonpath: the key in spec.key instead of REDACTED",
    },
    {
      flag: "--dry-run='none'",
      text: "client: send nothing; server: the server checks the key (webhooks too), stores nothing",
    },
  ],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length > 1) throw new CliError("create takes at most one NAME");
  const name = ctx.positionals[0];
  const generateName = ctx.string("generate-name");
  if (name && generateName) throw new CliError("give either NAME or --generate-name, not both");
  const owners = ["user", "team", "subject"].filter((f) => ctx.string(f) !== undefined);
  if (owners.length > 1)
    throw new CliError(
      `only one of --user, --team and --subject may be given (got ${owners.map((o) => `--${o}`).join(", ")})`,
    );
  const spec = buildSpec(ctx);
  const { dryRun, format } = await printing(ctx);
  const out = ctx.string("kubeconfig-out");
  if (out === "-") {
    // Standard output carries the key alone (docs/decisions.md OAK-13, OPS-23).
    throw new CliError(
      '--kubeconfig-out - is not taken: standard output carries the key alone. Give a file path, or make the kubeconfig from the key: KEY=$(kubectl accesskey create NAME); echo "$KEY" | kubectl accesskey kubeconfig NAME --key-file -',
    );
  }
  if (out === "") throw new CliError("--kubeconfig-out needs a file path");
  // The file is reserved before the key exists: a path that cannot be written costs no key.
  const file = out ? await SecretFile.reserve(out, "--kubeconfig-out") : undefined;
  try {
    const api = await ctx.api();
    const key = generateAccessKey();
    ctx.addGeneratedKey(key, keyForms(key));
    const metadata = name ? { name } : { generateName: generateName ?? "accesskey-" };
    const body = { apiVersion: api.identity.apiVersion, kind: api.identity.kind, metadata, spec };
    // A client dry run sends nothing, not even the question of how keys are stored.
    const sent = dryRun === "client" ? key : await keyToSend(api, ctx.vgateNamespace, key);
    const request = { ...body, spec: { ...spec, key: sent } };
    // An error that quotes what was sent is redacted where it is printed (main.ts).
    const created =
      dryRun === "client" ? request : await api.create(request, { dryRun: dryRun === "server" });
    const createdName = created.metadata?.name ?? name ?? "";
    const done = `${api.kindGroup}/${createdName} created`;
    if (file) {
      try {
        await file.commit(
          await keyKubeconfig(await ctx.connection(), createdName, key),
          "--kubeconfig-out",
        );
      } catch (err) {
        // The key exists now: it is not lost, it goes where it always goes, with what to do.
        ctx.io.out(`${key}\n`);
        ctx.io.err(
          `${done}, but its kubeconfig was not written\n${errorLine(err)}\n` +
            `The key is printed on standard output; make the kubeconfig from it with:\n` +
            `  kubectl accesskey kubeconfig ${createdName} --key-file - > FILE\n`,
        );
        return 1;
      }
    }
    if (format || dryRun !== "none") {
      await printCreated(ctx, created, { format, dryRun, key, sent });
      return 0;
    }
    ctx.io.out(`${key}\n`);
    ctx.io.err(`${done}${out ? ` (kubeconfig written to ${out})` : ""}\n`);
    return 0;
  } finally {
    await file?.discard();
  }
}

/** --dry-run and -o, checked against --kubeconfig-out and --show-key before anything is made. */
async function printing(
  ctx: CommandContext,
): Promise<{ dryRun: DryRun; format: OutputFormat | undefined }> {
  const dryRun = parseDryRun(ctx.string("dry-run"), (line) => ctx.io.err(`Warning: ${line}\n`));
  const format = await createOutput(ctx.string("output"));
  const out = ctx.string("kubeconfig-out");
  if (out !== undefined && dryRun !== "none") {
    throw new CliError("--kubeconfig-out cannot be used with --dry-run: a dry run makes no key");
  }
  if (format && dryRun === "none" && out === undefined) keyKeptBy(format, ctx.flag("show-key"));
  return { dryRun, format };
}

/** create's -o: undefined for the default (the key alone); kubectl create prints no table. */
async function createOutput(value: string | undefined): Promise<OutputFormat | undefined> {
  if (value === undefined) return undefined;
  const { parseOutput } = await import("../output/format.js");
  const format = value === "" || value === "wide" ? undefined : parseOutput(value);
  if (!format || format.kind === "table" || format.kind === "custom-columns") {
    throw new CliError(
      `unable to match a printer suitable for the output format "${value}", allowed formats are: ${CREATE_FORMATS.join(",")}`,
    );
  }
  return format;
}

const CREATE_FORMATS = ["json", "jsonpath", "jsonpath-as-json", "name", "yaml"];

/**
 * The key is shown once: a -o that prints it masked, or not at all, is refused before anything is
 * made unless --kubeconfig-out keeps it (checked by the caller).
 */
function keyKeptBy(format: OutputFormat, showKey: boolean): void {
  if (format.kind === "name") {
    throw new CliError(
      "-o name prints no key, and a new key is shown only once: add --kubeconfig-out FILE to keep it there, or leave out -o to print the key",
    );
  }
  if (!showKey) {
    throw new CliError(
      `-o ${format.kind} prints the key as REDACTED, and a new key is shown only once: add --show-key to print it in spec.key, or --kubeconfig-out FILE to keep it there`,
    );
  }
}

/**
 * What kubectl create prints with -o or --dry-run: `<kind>/<name> created (dry run)` on stdout
 * (without -o), the name alone (-o name), or the object, masked unless --show-key; with --show-key
 * spec.key holds the key itself, not the hash a hashed store keeps, since the key is what logs in.
 */
async function printCreated(
  ctx: CommandContext,
  created: KubeObject,
  how: { format: OutputFormat | undefined; dryRun: DryRun; key: string; sent: string },
): Promise<void> {
  const api = await ctx.api();
  const name = created.metadata?.name ?? "";
  if (!how.format) {
    ctx.io.out(`${api.kindGroup}/${escapeTerminal(name)} created${dryRunSuffix(how.dryRun)}\n`);
    return;
  }
  const showKey = ctx.flag("show-key");
  let shown = created;
  const spec = created["spec"];
  if (showKey && isJsonObject(spec) && spec["key"] === how.sent) {
    shown = { ...created, spec: { ...spec, key: how.key } };
  }
  const { printObjects } = await import("../output/print.js");
  ctx.io.out(
    printObjects(
      [shown],
      { format: how.format, showKey, generated: ctx.generatedKeys, kindGroup: api.kindGroup },
      false,
    ),
  );
}

function buildSpec(ctx: CommandContext): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  for (const [flag, field] of [
    ["display-name", "displayName"],
    ["description", "description"],
    ["user", "user"],
    ["team", "team"],
    ["subject", "subject"],
  ] as const) {
    const v = ctx.string(flag);
    if (v !== undefined) spec[field] = v;
  }
  const ttl = ctx.string("ttl");
  if (ttl !== undefined) spec["ttl"] = parseTtl(ttl);
  if (ctx.flag("ttl-after-last-activity")) {
    if (ttl === undefined) throw new CliError("--ttl-after-last-activity needs --ttl");
    spec["ttlAfterLastActivity"] = true;
  }
  const groups = ctx.strings("group");
  if (groups.length) spec["groups"] = groups;
  const scope = buildScope(ctx);
  if (Object.keys(scope).length) spec["scope"] = scope;
  return spec;
}

function buildScope(ctx: CommandContext): Record<string, unknown> {
  const scope: Record<string, unknown> = {};
  const projects = ctx.strings("project");
  if (projects.length) scope["projects"] = projects.map((project) => ({ project }));
  const spaces = ctx.strings("space").map((v) => pair(v, "--space", "PROJECT/SPACE"));
  if (spaces.length) scope["spaces"] = spaces.map(([project, space]) => ({ project, space }));
  const vcs = ctx
    .strings("virtual-cluster")
    .map((v) => pair(v, "--virtual-cluster", "PROJECT/NAME"));
  if (vcs.length)
    scope["virtualClusters"] = vcs.map(([project, virtualCluster]) => ({
      project,
      virtualCluster,
    }));
  const clusters = ctx.strings("cluster");
  if (clusters.length) scope["clusters"] = clusters.map((cluster) => ({ cluster }));
  const roles = ctx.strings("role");
  if (roles.length) scope["roles"] = roles.map((role) => ({ role }));
  return scope;
}

function pair(value: string, flag: string, form: string): [string, string] {
  const parts = value.split("/");
  if (parts.length !== 2 || !parts[0] || !parts[1]) {
    throw new CliError(`invalid ${flag} ${JSON.stringify(value)}: use ${form}`);
  }
  return [parts[0], parts[1]];
}
