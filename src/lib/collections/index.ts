/**
 * collections — keyed sets for what gains and loses an entry per message (a registry's live
 * deliveries, a channel's unsettled tags, a gate's keys): plain objects in dictionary mode instead of
 * Map and Set, whose tables V8 links old to new so that one table in the old generation drags every
 * later one and what it held out of each young collection (dictionary.ts says more).
 */
export { Dictionary } from './dictionary';
export { TagSet } from './tag-set';
