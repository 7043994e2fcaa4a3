/**
 * collections — keyed sets for what gains and loses an entry per message (a registry's live
 * deliveries, a channel's unsettled tags, a gate's keys): a Map or Set copied into a fresh one now
 * and then, because V8 links each table such a collection leaves to the next, and one table in the
 * old generation then drags every later one and what it held out of each young collection
 * (renewal.ts says more).
 */
export { Dictionary } from './dictionary';
export { RENEW_AFTER, renewDue } from './renewal';
export { TagSet } from './tag-set';
