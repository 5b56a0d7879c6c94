// `vgate bench`: measures the patch engine on a corpus (the format is in HELP below; `make bench`
// uses the maintainers' corpus, which is not part of this repository): JSON bytes in, patches
// applied, JSON bytes out, with the sandbox child processes included. Prints one JSON line per
// scenario, in the same format as the goja reference harness, so the two can be compared side by
// side.

import { availableParallelism } from "node:os";
import type { Json, JsonObject, PatchSpec, VClusterInfo } from "../patches/types.js";
import { parseCommandArgs } from "./args.js";
import { CliError, EXIT, usageError } from "./errors.js";
import { sourceName } from "../config/read-file.js";
import { parseDocument, readText } from "./input.js";
import type { Command } from "./command.js";

const HELP = `Measure how fast vgate applies Endpoint-sync patches.

Reads a corpus, a JSON or YAML file of the form
{"vcluster": {"name", "namespace"}, "scenarios": [{"name", "object", "patches"}]}, and, for each
scenario, applies its patches to its object for the measuring time: JSON bytes in, JSON bytes out.
Prints one JSON line per scenario:
{"engine","scenario","objects","ns_per_object","objects_per_second"}.

Usage:
  vgate bench --corpus FILE [--seconds S] [--engine sandbox|unsandboxed] [--workers N]

Flags:
      --corpus string    Corpus file (JSON or YAML)
      --seconds number   Measuring time per scenario (default 2)
      --engine string    sandbox: SES compartments in child processes, as the webhook runs them (default);
                         unsandboxed: the same engine with plain functions on the main thread (a baseline)
      --workers int      Sandbox child processes (default: the number of CPUs)
  -h, --help             Show this help

Examples:
  vgate bench --corpus my-patches.json --seconds 5
`;

interface Scenario {
  name: string;
  object: JsonObject;
  patches: PatchSpec[];
}
interface Corpus {
  vcluster: { name: string; namespace: string };
  scenarios: Scenario[];
}

export interface BenchLine {
  engine: string;
  scenario: string;
  objects: number;
  ns_per_object: number;
  objects_per_second: number;
}

function parseCorpus(doc: unknown, path: string): Corpus {
  const c = doc as Partial<Corpus> | null;
  const ok =
    !!c &&
    typeof c.vcluster?.name === "string" &&
    typeof c.vcluster.namespace === "string" &&
    Array.isArray(c.scenarios) &&
    c.scenarios.every(
      (s) =>
        typeof s?.name === "string" &&
        !!s.object &&
        typeof s.object === "object" &&
        Array.isArray(s.patches),
    );
  if (!ok) {
    throw new CliError(
      `${path} is not a bench corpus: expected {"vcluster": {"name", "namespace"}, "scenarios": [{"name", "object", "patches"}]}`,
    );
  }
  return c as Corpus;
}

const vclusterOf = (c: Corpus): VClusterInfo => ({ ...c.vcluster, config: {} as Json });

function line(engine: string, scenario: string, objects: number, elapsedNs: number): BenchLine {
  const ns = elapsedNs / objects;
  return {
    engine,
    scenario,
    objects,
    ns_per_object: Math.round(ns),
    objects_per_second: Math.round(1e10 / ns) / 10,
  };
}

/** The baseline: the same engine, expressions as plain functions on the main thread. */
async function runUnsandboxed(
  corpus: Corpus,
  seconds: number,
  out: (l: BenchLine) => void,
): Promise<void> {
  const { compilePatches, applyPatches } = await import("../patches/engine.js");
  const { plainRunner } = await import("../patches/plain-runner.js");
  const vcluster = vclusterOf(corpus);
  for (const s of corpus.scenarios) {
    const patches = compilePatches(s.patches);
    const run = plainRunner(s.patches, "toHost", vcluster);
    const bytes = JSON.stringify(s.object);
    const once = (): string => {
      const object = JSON.parse(bytes) as JsonObject;
      const r = applyPatches(
        { object, direction: "toHost", hostObject: null, virtualObject: null, owned: true },
        { patches, vcluster, run },
      );
      return JSON.stringify(r.object);
    };
    for (let i = 0; i < 20; i++) once();
    let n = 0;
    const start = process.hrtime.bigint();
    const budget = BigInt(Math.round(seconds * 1e9));
    while (process.hrtime.bigint() - start < budget) {
      once();
      n++;
    }
    out(line("vgate-unsandboxed", s.name, n, Number(process.hrtime.bigint() - start)));
  }
}

/**
 * Objects per batch: about 2 MB of JSON, some 20 ms of work, so that the round trip to a sandbox
 * child process (a few hundred µs on a busy machine) is amortised; a child only gets work when
 * it is idle, so a batch's size is what hides that round trip. Small objects: 2048 of 500 bytes
 * are 1 MB and 10 ms of work.
 */
function batchSize(objectBytes: number): number {
  return Math.max(1, Math.min(2048, Math.round(2_000_000 / objectBytes)));
}

async function runSandboxed(
  corpus: Corpus,
  seconds: number,
  workers: number,
  out: (l: BenchLine) => void,
): Promise<void> {
  const { SandboxPool } = await import("../patches/sandbox/pool.js");
  const pool = new SandboxPool({ size: workers, deadlineMs: 10_000 });
  try {
    for (const [i, s] of corpus.scenarios.entries()) {
      const key = `bench-${i}`;
      await pool.loadConfig(key, { patches: s.patches, vcluster: vclusterOf(corpus) });
      const objectJson = JSON.stringify(s.object);
      const jobs = Array.from({ length: batchSize(objectJson.length) }, () => ({
        objectJson,
        direction: "toHost" as const,
      }));
      const batch = async (): Promise<number> => {
        const results = await pool.applyBatch(key, jobs);
        for (const r of results)
          if ("error" in r) throw new CliError(`${s.name}: ${r.error.message}`);
        return results.length;
      };
      await batch(); // warm-up: JIT in every worker
      await Promise.all(Array.from({ length: workers }, batch));
      let n = 0;
      const start = process.hrtime.bigint();
      const deadline = start + BigInt(Math.round(seconds * 1e9));
      // Two batches per child keep one waiting whenever a child becomes idle.
      const lane = async (): Promise<void> => {
        while (process.hrtime.bigint() < deadline) {
          // Not `n += await batch()`: that reads n before awaiting and loses the other lanes' counts.
          const done = await batch();
          n += done;
        }
      };
      await Promise.all(Array.from({ length: workers * 2 }, lane));
      out(line("vgate", s.name, n, Number(process.hrtime.bigint() - start)));
    }
  } finally {
    await pool.close();
  }
}

export const benchCommand: Command = {
  name: "bench",
  help: HELP,
  async run(args) {
    const parsed = parseCommandArgs("bench", args, {
      corpus: { type: "string" },
      seconds: { type: "string", default: "2" },
      engine: { type: "string", default: "sandbox" },
      workers: { type: "string" },
      help: { type: "boolean", short: "h" },
    });
    if (parsed.positionals.length) throw usageError("bench takes no arguments; use --corpus FILE");
    const v = parsed.values;
    if (v.help) {
      process.stdout.write(HELP);
      return EXIT.OK;
    }
    if (!v.corpus)
      throw usageError("bench needs --corpus FILE\nRun 'vgate bench --help' for usage.");
    const seconds = Number(v.seconds);
    if (!(seconds > 0 && seconds <= 600))
      throw usageError(`invalid --seconds ${JSON.stringify(v.seconds)}: 0 < S <= 600`);
    const workers = v.workers === undefined ? availableParallelism() : Number(v.workers);
    if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
      throw usageError(`invalid --workers ${JSON.stringify(v.workers)}: an integer from 1 to 64`);
    }
    if (v.engine !== "sandbox" && v.engine !== "unsandboxed") {
      throw usageError(`invalid --engine ${JSON.stringify(v.engine)}: sandbox or unsandboxed`);
    }
    const corpus = parseCorpus(
      parseDocument(
        await readText({ path: v.corpus, what: "--corpus", command: "bench" }),
        sourceName(v.corpus),
      ),
      v.corpus,
    );
    const out = (l: BenchLine): void => {
      process.stdout.write(`${JSON.stringify(l)}\n`);
    };
    if (v.engine === "unsandboxed") await runUnsandboxed(corpus, seconds, out);
    else await runSandboxed(corpus, seconds, workers, out);
    return EXIT.OK;
  },
};
