// One budget for the bytes of all request bodies the server holds at once, across every connection.
// A per-request limit alone let 200 clients that each sent most of a 3 MiB body, and then stalled,
// take vgate to 708 MB RSS; with the budget, memory for bodies is bounded whatever clients do.
//
// A body with a Content-Length (kube-apiserver always sends one) takes its whole length before a
// byte of it is read, so one that cannot fit is refused unread, and bodies never grow into each
// other only to be dropped half-read (the bytes read would be garbage, which V8 lets pile up before
// it collects). A chunked body takes 64 KiB, then doubles what it holds as it grows. A body keeps
// its bytes until its answer is written, since the request parsed from it lives as long.
//
// When a body does not fit, the budget makes room by shedding the largest body that is still being
// received and is larger than the newcomer: a small AdmissionReview (the usual one is a few KiB)
// always gets through, however many large bodies stall, and bodies of one size never push each
// other out. When nothing larger is left to shed, the newcomer is refused.

/** One request body that draws on the budget. */
export interface BodyHold {
  /** Bytes of this body counted in the budget. */
  held: number;
  /** Called when the budget takes this body's bytes back to make room for a smaller body. */
  shed(): void;
}

export class BodyBudget {
  /** Bytes counted now, in all bodies. */
  private used = 0;
  /** Bodies still arriving: the only ones that may be shed (the others are being answered). */
  private readonly receiving = new Set<BodyHold>();

  constructor(readonly capacity: number) {}

  get bytesInUse(): number {
    return this.used;
  }

  /** Registers a body that starts to arrive. */
  open(hold: BodyHold): void {
    this.receiving.add(hold);
  }

  /** The body has arrived whole: it keeps its bytes, and can no longer be shed. */
  received(hold: BodyHold): void {
    this.receiving.delete(hold);
  }

  /**
   * Counts `bytes` more for `hold`, shedding larger bodies still being received if that makes
   * room (each one's shed() is called after its bytes are back). Returns false, and counts
   * nothing, when the bytes cannot fit.
   */
  take(hold: BodyHold, bytes: number): boolean {
    const after = hold.held + bytes;
    while (this.used + bytes > this.capacity) {
      const victim = this.largestReceivingAbove(after);
      if (!victim) return false;
      this.release(victim);
      victim.shed();
    }
    this.used += bytes;
    hold.held = after;
    return true;
  }

  /** Keeps only `bytes` of what `hold` holds. */
  shrink(hold: BodyHold, bytes: number): void {
    if (bytes >= hold.held) return;
    this.used -= hold.held - bytes;
    hold.held = bytes;
  }

  /** Gives back everything `hold` holds; safe to call more than once. */
  release(hold: BodyHold): void {
    this.used -= hold.held;
    hold.held = 0;
    this.receiving.delete(hold);
  }

  /** Only runs when the budget is full; a scan of the bodies in flight (hundreds at most). */
  private largestReceivingAbove(bytes: number): BodyHold | undefined {
    let largest: BodyHold | undefined;
    for (const h of this.receiving) {
      if (h.held > bytes && (!largest || h.held > largest.held)) largest = h;
    }
    return largest;
  }
}
