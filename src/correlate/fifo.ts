/**
 * A first-in-first-out list whose members can also leave from anywhere, in O(1): each member
 * holds its node, so removing it needs no search. Several lists can hold one value, each through
 * a node of its own.
 */
export interface FifoNode<T> {
  readonly value: T;
  /** The list holding this node; undefined once removed. */
  list: Fifo<T> | undefined;
  older: FifoNode<T> | undefined;
  newer: FifoNode<T> | undefined;
}

export class Fifo<T> {
  private head: FifoNode<T> | undefined;
  private tail: FifoNode<T> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The oldest value. */
  get first(): T | undefined {
    return this.head?.value;
  }

  /** Appends `value`; the node returned removes it again. */
  push(value: T): FifoNode<T> {
    const node: FifoNode<T> = { value, list: this, older: this.tail, newer: undefined };
    if (this.tail === undefined) this.head = node;
    else this.tail.newer = node;
    this.tail = node;
    this.count += 1;
    return node;
  }

  /** Removes a node of this list (a node already removed is left alone). */
  remove(node: FifoNode<T>): void {
    if (node.list !== this) return;
    if (node.older === undefined) this.head = node.newer;
    else node.older.newer = node.newer;
    if (node.newer === undefined) this.tail = node.older;
    else node.newer.older = node.older;
    node.list = undefined;
    this.count -= 1;
  }
}
