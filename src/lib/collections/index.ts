/**
 * collections — keyed sets for what gains and loses an entry per message, without a Map or Set kept
 * for good, because V8 links each table such a collection leaves to the next, and one table in the old
 * generation then drags every later one and what it held out of each young collection (renewal.ts
 * says more): a ring of slots for entries by a growing number (a registry's live deliveries, a
 * channel's unsettled tags: numbered.ts), a Map copied into a fresh one now and then for entries by
 * text (a gate's keys: dictionary.ts).
 */
export { Dictionary } from './dictionary';
export { NumberedSlots } from './numbered';
export { TagSet } from './tag-set';
