// The subcommands, each loaded only when it runs (startup reads this file, not the commands).

import type { Command } from "../cli/command.js";

export interface Entry {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

export const COMMANDS: readonly Entry[] = [
  {
    name: "create",
    summary: "Create an access key and print it once",
    load: async () => (await import("./create.js")).command,
  },
  {
    name: "list",
    summary: "List your access keys (--all: everyone's)",
    load: async () => (await import("./list.js")).command,
  },
  {
    name: "get",
    summary: "Show one or more access keys",
    load: async () => (await import("./get.js")).command,
  },
  {
    name: "describe",
    summary: "Show the details of an access key",
    load: async () => (await import("./describe.js")).command,
  },
  {
    name: "delete",
    summary: "Delete access keys",
    load: async () => (await import("./delete.js")).command,
  },
  {
    name: "prune",
    summary: "Delete your expired access keys (--all: everyone's)",
    load: async () => (await import("./prune.js")).command,
  },
  {
    name: "disable",
    summary: "Disable an access key (it stays, but cannot log in)",
    load: async () => (await import("./disable.js")).disable,
  },
  {
    name: "enable",
    summary: "Enable a disabled access key",
    load: async () => (await import("./disable.js")).enable,
  },
  {
    name: "rotate",
    summary: "Give an access key a new secret and print it once",
    load: async () => (await import("./rotate.js")).command,
  },
  {
    name: "annotate",
    summary: "Add or remove annotations of an access key",
    load: async () => (await import("./annotate.js")).command,
  },
  {
    name: "edit",
    summary: "Edit an access key in $EDITOR",
    load: async () => (await import("./edit.js")).command,
  },
  {
    name: "kubeconfig",
    summary: "Print a kubeconfig that logs in with an access key",
    load: async () => (await import("./kubeconfig.js")).command,
  },
  {
    name: "whoami",
    summary: "Show who the API server says you are",
    load: async () => (await import("./whoami.js")).command,
  },
  {
    name: "version",
    summary: "Print the plugin's version, git commit and build date",
    load: async () => (await import("./version.js")).command,
  },
  {
    name: "completion",
    summary: "Print a shell completion script (bash, zsh, fish, powershell)",
    load: async () => (await import("./completion.js")).command,
  },
];

export function findCommand(name: string): Entry | undefined {
  return COMMANDS.find((c) => c.name === name);
}
