/**
 * When a Map or Set that gains and loses an entry per message is copied into a fresh one (pure).
 *
 * Such a collection rebuilds its hash table every few dozen messages, and V8 links each table it
 * leaves to the one that replaces it (for iterators still walking it). Once one of those tables is in
 * the old generation (a busy start, while the young generation is still small), it keeps the next
 * table alive through each young collection until that one is promoted too, and so on for good: every
 * table, and every delivery each one held, ends in the old generation (in a real Node-RED process
 * about 1 KB per message, and young collections 3–10 times as long: docs/benchmark.md, *Where the
 * GC time went*). A fresh copy has no link to the tables before it, so a chain ends at the next
 * renewal; a copy now and then costs far less than the chain (or than plain objects in dictionary
 * mode, which have no link but hash each new key into V8's string table: 3–5 times as slow per
 * operation, measured).
 */

/** Additions between renewals at the least; more with more entries (a copy costs one step per entry). */
export const RENEW_AFTER = 1024;

/** Whether a collection of `size` entries that gained `added` since its last renewal is copied now. */
export function renewDue(added: number, size: number): boolean {
  return added >= RENEW_AFTER + 4 * size;
}
