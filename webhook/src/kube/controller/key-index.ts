// Which queue key each object of a watch stands for, kept from the watch's changes: the key a
// controller works on is often not the object's own (a host copy queues the virtual object it was
// made from), and a DELETED event no longer has the object to derive it from. Knows no domain.

/** Watched object key → the queue key it stands for; a change queues the keys it touches. */
export class KeyIndex {
  private readonly queueKeys = new Map<string, string>();

  constructor(private readonly enqueue: (queueKey: string) => void) {}

  /** The queue keys the watched objects stand for now. */
  values(): IterableIterator<string> {
    return this.queueKeys.values();
  }

  /**
   * The object `objectKey` now stands for `queueKey` (undefined: for none, or it was deleted):
   * queues the key it stood for before, when that changed, and the one it stands for now.
   */
  set(objectKey: string, queueKey: string | undefined): void {
    const before = this.queueKeys.get(objectKey);
    if (queueKey === undefined) this.queueKeys.delete(objectKey);
    else this.queueKeys.set(objectKey, queueKey);
    if (before !== undefined && before !== queueKey) this.enqueue(before);
    if (queueKey !== undefined) this.enqueue(queueKey);
  }
}
