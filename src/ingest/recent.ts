/** A bounded set of recently seen ids (webhook delivery_ids): the oldest is forgotten first. */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity: number) {}

  /** Records the id; false when it was already there (a replay). */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    if (this.ids.size >= this.capacity) {
      const oldest = this.ids.values().next();
      if (oldest.done !== true) this.ids.delete(oldest.value);
    }
    this.ids.add(id);
    return true;
  }
}
