// kubectl accesskey disable|enable NAME…: sets or clears spec.disabled (read, change, replace; again
// on a resourceVersion conflict). A disabled key stays, but never authenticates.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError } from "../cli/errors.js";
import { specOf, updateWithRetry } from "../keys/conflict-retry.js";

function toggle(name: "disable" | "enable"): Command {
  const disable = name === "disable";
  return {
    name,
    summary: disable
      ? "Disable an access key (it stays, but cannot log in)"
      : "Enable a disabled access key",
    usage: `${name} NAME... [flags]`,
    description: disable
      ? `Disable OwnedAccessKeys: they stay, with their metadata, but cannot be used to log in until
enabled again.`
      : "Enable disabled OwnedAccessKeys again.",
    examples: `# ${disable ? "Stop a key from working, keeping it" : "Let a disabled key work again"}
kubectl accesskey ${name} ci`,
    options: {},
    flagHelp: [],
    run: async (ctx: CommandContext) => {
      if (ctx.positionals.length === 0) throw new CliError(`${name} needs at least one NAME`);
      const api = await ctx.api();
      for (const key of ctx.positionals) {
        const { changed } = await updateWithRetry(api, key, (obj) => {
          const spec = specOf(obj);
          if ((spec["disabled"] === true) === disable) return false;
          if (disable) spec["disabled"] = true;
          else delete spec["disabled"];
          return true;
        });
        ctx.io.out(
          `${api.kindGroup}/${key} ${changed ? `${name}d` : `unchanged (already ${name}d)`}\n`,
        );
      }
      return 0;
    },
  };
}

export const disable = toggle("disable");
export const enable = toggle("enable");
