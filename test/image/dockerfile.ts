// The repository's Dockerfile read as Docker reads it (instructions, stages, global ARGs) and its
// .dockerignore, and a build simulated without Docker: each stage's root is a directory, COPY copies
// from the build context (the repository minus .dockerignore) or from an earlier stage, and RUN
// runs what this machine can run in its place. A RUN it does not know fails the build, so a changed
// Dockerfile is never silently half-checked.

import { spawn } from "node:child_process";
import { cp, mkdir, readdir, stat } from "node:fs/promises";
import { basename, dirname, join, posix, relative } from "node:path";

export interface Instruction {
  op: string;
  args: string;
  line: number;
}

export interface Stage {
  index: number;
  name?: string;
  base: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  globalArgs: Record<string, string>;
  stages: Stage[];
}

/** Instructions with continuation lines joined and comments dropped. */
export function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = "";
  let start = 0;
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (pending === "" && (line === "" || line.startsWith("#"))) return;
    if (pending === "") start = i + 1;
    if (line.startsWith("#")) return;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const full = (pending + line).trim();
    pending = "";
    const m = /^(\S+)\s*(.*)$/.exec(full)!;
    out.push({ op: m[1]!.toUpperCase(), args: m[2]!, line: start });
  });
  return out;
}

export function parseDockerfile(text: string): Dockerfile {
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const ins of instructions(text)) {
    if (ins.op === "ARG" && stages.length === 0) {
      const [name, value = ""] = ins.args.split("=", 2);
      globalArgs[name!.trim()] = value.trim();
    } else if (ins.op === "FROM") {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`line ${ins.line}: cannot read FROM ${ins.args}`);
      const base = m[1]!.replace(
        /\$\{(\w+)\}|\$(\w+)/g,
        (_, a?: string, b?: string) => globalArgs[(a ?? b)!] ?? "",
      );
      stages.push({ index: stages.length, name: m[2], base, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`line ${ins.line}: ${ins.op} before FROM`);
      stage.instructions.push(ins);
    }
  }
  return { globalArgs, stages };
}

export interface Copy {
  from?: string;
  sources: string[];
  dest: string;
  line: number;
}

/** A COPY's flags, sources and destination (shell form and JSON form). */
export function parseCopy(ins: Instruction): Copy {
  const words = ins.args.trim().startsWith("[")
    ? (JSON.parse(ins.args) as string[])
    : ins.args.split(/\s+/).filter(Boolean);
  const flags = words.filter((w) => w.startsWith("--"));
  const paths = words.filter((w) => !w.startsWith("--"));
  const from = flags.find((f) => f.startsWith("--from="))?.slice("--from=".length);
  if (paths.length < 2) throw new Error(`line ${ins.line}: COPY needs a source and a destination`);
  return { from, sources: paths.slice(0, -1), dest: paths.at(-1)!, line: ins.line };
}

/** .dockerignore as Docker applies it: Go filepath.Match patterns with `**`, `!` re-includes. */
export function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const negate = l.startsWith("!");
      const pattern = posix.normalize((negate ? l.slice(1) : l).trim()).replace(/^\/+|\/+$/g, "");
      return { negate, regex: globRegex(pattern) };
    });
  return (path) => {
    const parts = path.split("/");
    // A pattern that matches a parent directory excludes everything under it.
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
    let ignored = false;
    for (const rule of rules) if (prefixes.some((p) => rule.regex.test(p))) ignored = !rule.negate;
    return ignored;
  };
}

function globRegex(pattern: string): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      re += pattern[i + 2] === "/" ? "(?:.*/)?" : ".*";
      i += pattern[i + 2] === "/" ? 2 : 1;
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** Every file under `path` (a file itself when it is one), relative to `root`. */
export async function filesUnder(root: string, path: string): Promise<string[]> {
  const full = join(root, path);
  if (!(await stat(full)).isDirectory()) return [path];
  const entries = await readdir(full, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => !e.isDirectory())
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

export interface RunContext {
  /** The stage's WORKDIR on this machine. */
  cwd: string;
  stage: Stage;
}

/** What stands in for one RUN command here; null when it is not known. */
export type RunHandler = (command: string, ctx: RunContext) => Promise<void> | null;

export interface SimulatedBuild {
  /** Each stage's root directory. */
  roots: string[];
  /** The final stage's WORKDIR, as a path inside the image. */
  workdir: string;
}

/** Builds every stage under `dir`, stages that do not depend on each other at the same time. */
export async function simulateBuild(
  file: Dockerfile,
  context: string,
  ignored: (path: string) => boolean,
  dir: string,
  run: RunHandler,
): Promise<SimulatedBuild> {
  const roots = file.stages.map((s) => join(dir, `stage-${s.index}`));
  const workdirs: string[] = file.stages.map(() => "/");
  const done: Promise<void>[] = [];
  for (const stage of file.stages) {
    const deps = stage.instructions
      .filter((i) => i.op === "COPY")
      .map((i) => parseCopy(i).from)
      .filter((f): f is string => f !== undefined)
      .map((from) => stageIndex(file, from, stage));
    done.push(
      Promise.all(deps.map((d) => done[d])).then(() =>
        buildStage(stage, { file, context, ignored, roots, workdirs, run }),
      ),
    );
  }
  await Promise.all(done);
  return { roots, workdir: workdirs.at(-1)! };
}

function stageIndex(file: Dockerfile, from: string, stage: Stage): number {
  const found = file.stages.find((s) => s.name === from || String(s.index) === from);
  if (!found || found.index >= stage.index)
    throw new Error(`COPY --from=${from} in stage ${stage.index} names no earlier stage`);
  return found.index;
}

interface BuildState {
  file: Dockerfile;
  context: string;
  ignored: (path: string) => boolean;
  roots: string[];
  workdirs: string[];
  run: RunHandler;
}

async function buildStage(stage: Stage, st: BuildState): Promise<void> {
  const root = st.roots[stage.index]!;
  await mkdir(root, { recursive: true });
  for (const ins of stage.instructions) {
    const cwd = join(root, st.workdirs[stage.index]!);
    if (ins.op === "WORKDIR") {
      st.workdirs[stage.index] = posix.resolve(st.workdirs[stage.index]!, ins.args);
      await mkdir(join(root, st.workdirs[stage.index]!), { recursive: true });
    } else if (ins.op === "COPY") {
      await copy(parseCopy(ins), root, st.workdirs[stage.index]!, st);
    } else if (ins.op === "RUN") {
      const pending = st.run(ins.args, { cwd, stage });
      if (!pending) throw new Error(`line ${ins.line}: no stand-in for RUN ${ins.args}`);
      await pending;
    }
  }
}

async function copy(c: Copy, root: string, workdir: string, st: BuildState): Promise<void> {
  const fromRoot = c.from === undefined ? st.context : undefined;
  const destIsDir = c.dest.endsWith("/") || c.sources.length > 1;
  for (const source of c.sources) {
    let files: string[];
    let base: string;
    if (fromRoot) {
      base = fromRoot;
      files = (await filesUnder(fromRoot, source)).filter((f) => !st.ignored(f));
      if (files.length === 0)
        throw new Error(`line ${c.line}: COPY ${source}: not in the build context`);
    } else {
      const from = st.file.stages.find((s) => s.name === c.from || String(s.index) === c.from)!;
      base = st.roots[from.index]!;
      const whole = join(base, source);
      if ((await stat(whole)).isDirectory()) {
        // A whole tree of an earlier stage (node_modules): copied at once, links as they are.
        await cp(whole, join(root, posix.resolve(workdir, c.dest)), {
          recursive: true,
          verbatimSymlinks: true,
        });
        continue;
      }
      files = [source.replace(/^\/+/, "")];
    }
    const src = fromRoot ? source : source.replace(/^\/+/, "");
    const target = join(root, posix.resolve(workdir, c.dest));
    for (const file of files) {
      const rest = relative(src, file);
      const to =
        rest === "" ? (destIsDir ? join(target, basename(file)) : target) : join(target, rest);
      await mkdir(dirname(to), { recursive: true });
      await cp(join(base, file), to, { verbatimSymlinks: true });
    }
  }
}

/** Runs a program; rejects with its output when it exits non-zero. */
export function exec(
  program: string,
  args: readonly string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; uid?: number; gid?: number },
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += String(c)));
    child.stderr.on("data", (c: Buffer) => (stderr += String(c)));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`${program} ${args.join(" ")} exited ${code}:\n${stdout}${stderr}`));
    });
  });
}
