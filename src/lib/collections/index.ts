/**
 * collections — keyed sets for what gains and loses an entry per message, without Map and Set, whose
 * tables V8 links old to new so that one table in the old generation drags every later one and what
 * it held out of each young collection (dictionary.ts says more): a ring of slots for entries by a
 * growing number (a registry's live deliveries, a channel's unsettled tags: numbered.ts), a plain
 * object in dictionary mode for entries by text (a gate's keys).
 */
export { Dictionary } from './dictionary';
export { NumberedSlots } from './numbered';
export { TagSet } from './tag-set';
