// A sandbox child's resource limits: the V8 limits it is started with, and the resident memory the
// server lets it reach before killing it (docs/decisions.md EPS-8).
import { readFileSync } from "node:fs";
import type { ChildLimits } from "./child-process.js";

export interface ResourceLimits {
  /** V8 old generation, MiB; default 64. Over it V8 aborts the child. */
  maxOldGenerationSizeMb?: number;
  /** V8 young generation (three semi-spaces), MiB; default 48. */
  maxYoungGenerationSizeMb?: number;
  /** V8 stack, MiB; default 4, kept below the operating system's stack limit. */
  stackSizeMb?: number;
  /**
   * Resident memory, MiB; default 256. The server reads it while the child works and kills the
   * child over it: this counts what the V8 limits do not (memory outside the heap).
   */
  maxResidentMb?: number;
}

export const DEFAULT_RESOURCE_LIMITS: Required<ResourceLimits> = {
  maxOldGenerationSizeMb: 64,
  // 16 MiB semi-spaces: at 8 MiB the 1000-address bench object spends a third of its time in GC.
  maxYoungGenerationSizeMb: 48,
  stackSizeMb: 4,
  maxResidentMb: 256,
};

const MIB = 1024 * 1024;
/** Room V8 and native frames need above its own stack limit. */
const STACK_MARGIN_KB = 256;

export function resolveLimits(limits: ResourceLimits | undefined): Required<ResourceLimits> {
  const out = { ...DEFAULT_RESOURCE_LIMITS };
  for (const key of Object.keys(out) as (keyof ResourceLimits)[]) {
    const value = limits?.[key];
    if (value !== undefined && Number.isFinite(value) && value > 0) out[key] = value;
  }
  return out;
}

export function childLimits(limits: Required<ResourceLimits>): ChildLimits {
  const osStackKb = osStackLimitKb();
  return {
    heapMb: Math.ceil(limits.maxOldGenerationSizeMb),
    semiSpaceMb: Math.max(1, Math.ceil(limits.maxYoungGenerationSizeMb / 3)),
    // Past the real stack, V8's check comes too late and the child segfaults instead of throwing
    // RangeError.
    stackKb: Math.max(
      256,
      Math.min(Math.floor(limits.stackSizeMb * 1024), osStackKb - STACK_MARGIN_KB),
    ),
  };
}

export function residentLimitBytes(limits: Required<ResourceLimits>): number {
  return limits.maxResidentMb * MIB;
}

/** The soft stack limit a child inherits, in KiB; 8 MiB (Linux's default) when unknown. */
function osStackLimitKb(): number {
  try {
    const line = /^Max stack size\s+(\S+)/m.exec(readFileSync("/proc/self/limits", "latin1"));
    const bytes = Number(line?.[1]);
    if (Number.isFinite(bytes) && bytes > 0) return Math.floor(bytes / 1024);
  } catch {
    // No /proc: use the default below.
  }
  return 8192;
}
