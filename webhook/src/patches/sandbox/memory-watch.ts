// The pool's memory poll: while any child works, the resident memory of the working ones is read
// from /proc and a child over its limit is told so (docs/decisions.md EPS-8). This counts what the
// V8 limits do not: memory outside the heap, such as a regular expression's compiler.

/** How often a working child's resident memory is read. */
const MEMORY_POLL_MS = 5;

/** A working child, as the memory poll sees it. */
export interface WatchedChild {
  /** Resident memory in bytes; undefined where it cannot be read. */
  rssBytes(): number | undefined;
  /** The child is over its resident limit: it is to be ended. */
  overMemory(residentBytes: number): void;
}

export class MemoryWatch {
  private poll: NodeJS.Timeout | undefined;

  /** `working` lists the children that run jobs now; the poll stops when there are none. */
  constructor(
    private readonly limitBytes: number,
    private readonly working: () => WatchedChild[],
  ) {}

  /** Starts the poll unless it runs. */
  start(): void {
    if (this.poll !== undefined) return;
    this.poll = setInterval(() => {
      const working = this.working();
      if (working.length === 0) {
        clearInterval(this.poll);
        this.poll = undefined;
        return;
      }
      for (const child of working) {
        const resident = child.rssBytes();
        if (resident !== undefined && resident > this.limitBytes) child.overMemory(resident);
      }
    }, MEMORY_POLL_MS);
    this.poll.unref();
  }
}
