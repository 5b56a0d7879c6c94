// kubectl accesskey whoami: the API server's SelfSubjectReview (authentication.k8s.io/v1): user,
// groups, and the access key a key login carries in its extra attributes.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError } from "../cli/errors.js";

export const command: Command = {
  name: "whoami",
  summary: "Show who the API server says you are",
  usage: "whoami [-o json|yaml] [flags]",
  description: `Ask the API server who you are (a SelfSubjectReview), as kubectl auth whoami does: user
name, UID, groups and extra attributes (for a login with an access key, the key's name; never the
key itself).`,
  examples: `# Who am I with the current context?
kubectl accesskey whoami

# Who does a key log in as?
kubectl accesskey whoami --kubeconfig ci.kubeconfig -o json`,
  options: { output: { type: "string", short: "o" } },
  flagHelp: [{ flag: "-o, --output=''", text: "json or yaml instead of a table" }],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length > 0) throw new CliError("whoami takes no arguments");
  const output = ctx.string("output");
  if (output !== undefined && output !== "json" && output !== "yaml") {
    throw new CliError(
      `unable to match a printer suitable for the output format "${output}", allowed formats are: json,yaml`,
    );
  }
  const api = await ctx.api();
  const { userInfo, review } = await api.whoAmI();
  // The review is the server's text: -o json and -o yaml escape what a terminal would act on, the
  // table escapes each value whole (docs/decisions.md OAK-30).
  const { escapeJsonText, escapeTerminal } = await import("../output/terminal-text.js");
  if (output === "json") {
    ctx.io.out(`${escapeJsonText(JSON.stringify(review, null, 4))}\n`);
    return 0;
  }
  if (output === "yaml") {
    const { goYaml } = await import("../output/go-yaml.js");
    ctx.io.out(goYaml(review));
    return 0;
  }
  const text = (v: unknown) => escapeTerminal(String(v));
  const rows: [string, string][] = [["ATTRIBUTE", "VALUE"]];
  if (userInfo.username) rows.push(["Username", text(userInfo.username)]);
  if (userInfo.uid) rows.push(["UID", text(userInfo.uid)]);
  if (userInfo.groups?.length) rows.push(["Groups", `[${userInfo.groups.map(text).join(" ")}]`]);
  for (const [k, v] of Object.entries(userInfo.extra ?? {}).sort(([a], [b]) =>
    a.localeCompare(b),
  )) {
    rows.push([`Extra: ${text(k)}`, `[${(Array.isArray(v) ? v : []).map(text).join(" ")}]`]);
  }
  const width = Math.max(...rows.map(([k]) => [...k].length)) + 3;
  ctx.io.out(rows.map(([k, v]) => `${k.padEnd(width)}${v}\n`).join(""));
  return 0;
}
