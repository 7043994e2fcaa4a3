/**
 * Which partitions of a partitioned configuration an instance holds: a deterministic, even share from
 * the sorted list of live instances, the same on every instance that sees the same list. Pure.
 *
 * Rendezvous hashing with quotas: each (instance, partition) pair has a score (FNV-1a of both); every
 * instance gets ⌊P / M⌋ partitions, and P mod M of them one more, each partition going to the
 * highest-scoring instance that still has room. So every share is ⌊P / M⌋ or ⌈P / M⌉, and an instance
 * joining or leaving moves few partitions: the others keep most of theirs.
 */
import { fnv1a32 } from '../topology';

/** The partitions of `partitions` each instance of `members` holds (every member is a key, sorted ascending). */
export function sharePartitions(members: readonly string[], partitions: number): Map<string, number[]> {
  const sorted = [...new Set(members)].sort();
  const shares = new Map<string, number[]>(sorted.map((m) => [m, []]));
  if (sorted.length === 0) return shares;
  const floor = Math.floor(partitions / sorted.length);
  let extra = partitions % sorted.length;
  // The pairs, best score first: a partition goes to the best instance with room, as in a stable matching.
  const pairs: Array<{ member: string; partition: number; score: number }> = [];
  for (const member of sorted) for (let p = 0; p < partitions; p++) pairs.push({ member, partition: p, score: fnv1a32(`${member}\u0000${p}`) });
  pairs.sort((a, b) => b.score - a.score || a.partition - b.partition || (a.member < b.member ? -1 : 1));
  const given = new Set<number>();
  for (const { member, partition } of pairs) {
    if (given.has(partition)) continue;
    const share = shares.get(member) as number[];
    if (share.length < floor || (share.length === floor && extra > 0)) {
      if (share.length === floor) extra--;
      share.push(partition);
      given.add(partition);
    }
  }
  for (const share of shares.values()) share.sort((a, b) => a - b);
  return shares;
}

/** The partitions `self` holds among `members` (self counts as live whether listed or not). */
export function ownPartitions(self: string, members: readonly string[], partitions: number): number[] {
  return sharePartitions([self, ...members], partitions).get(self) ?? [];
}

/**
 * The instances heard from recently: each one's last heartbeat time; an instance not heard from for
 * `expireMs` (or that said goodbye) is gone. Pure, with the times given by the caller.
 */
export class MemberTable {
  private readonly seen = new Map<string, number>();

  constructor(private readonly expireMs: number) {}

  /** Heard from `id` at `now`; true when it is new (not live before). */
  heard(id: string, now: number): boolean {
    const last = this.seen.get(id);
    this.seen.set(id, now);
    return last === undefined || now - last > this.expireMs;
  }

  /** `id` said goodbye. */
  left(id: string): void {
    this.seen.delete(id);
  }

  /** The live instances at `now`, sorted; the expired ones are forgotten. */
  live(now: number): string[] {
    for (const [id, at] of this.seen) if (now - at > this.expireMs) this.seen.delete(id);
    return [...this.seen.keys()].sort();
  }
}
