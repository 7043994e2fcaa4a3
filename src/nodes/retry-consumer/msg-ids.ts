/**
 * `msg._msgid` for the msgs a consumer sends: 16 hex digits like Node-RED's own ids
 * (`RED.util.generateId`), unique in the process: 8 random ones, drawn again every 2^32 ids, then a
 * counter. Given by the consumer so that Node-RED does not make one per msg: its generateId builds
 * each of 8 random bytes as a string of its own and joins them, about 25 allocations per message on
 * the consume path, where this is one or two.
 */
import { randomBytes } from 'node:crypto';

export class MsgIds {
  private prefix = '';
  private counter = 0;

  next(): string {
    const n = this.counter;
    if (n === 0) this.prefix = randomBytes(4).toString('hex');
    this.counter = (n + 1) >>> 0; // after 2^32 ids: a new prefix
    return this.prefix + n.toString(16).padStart(8, '0');
  }
}
