/**
 * Why a consumer takes no messages: asked to (a control msg, `user`), its deduplication store is down
 * with the `pause` policy (`store`), its kill switch is open (`circuit`), or its partition is held by
 * another instance (`standby`: see `members.ts`). Pure bookkeeping of one
 * session, which owns it and does the cancelling and consuming; the reasons add up, and the consumer
 * takes messages again once none is left.
 */
import type { DedupeStoreProblem } from '../dedupe';
import type { SessionState } from './types';

export type PauseReason = 'user' | 'store' | 'circuit' | 'standby';

const PAUSED: SessionState = { phase: 'paused', detail: 'paused' };
const CIRCUIT_OPEN: SessionState = { phase: 'circuit-open' };
export const STANDBY: SessionState = { phase: 'paused', detail: 'standby' };

export class Pauses {
  private readonly reasons = new Set<PauseReason>();

  /** Paused for any reason. */
  get any(): boolean {
    return this.reasons.size > 0;
  }

  has(reason: PauseReason): boolean {
    return this.reasons.has(reason);
  }

  /** Paused for `reason` too; false when it already was. */
  add(reason: PauseReason): boolean {
    if (this.reasons.has(reason)) return false;
    this.reasons.add(reason);
    return true;
  }

  /** No longer paused for `reason`; false when it was not. */
  remove(reason: PauseReason): boolean {
    return this.reasons.delete(reason);
  }

  /**
   * The state of a consumer that has its channel: paused for the reason the user can act on first (the
   * store, with why it is down; then by hand; then the kill switch; then standby), or consuming.
   */
  state(storeDown: string | undefined, storeProblem?: DedupeStoreProblem): SessionState {
    if (this.reasons.has('store')) return { phase: 'store-down', detail: storeDown ?? 'deduplication store down', ...(storeProblem ? { storeProblem } : {}) };
    if (this.reasons.has('user')) return PAUSED;
    if (this.reasons.has('circuit')) return CIRCUIT_OPEN;
    return this.reasons.has('standby') ? STANDBY : { phase: 'consuming' };
  }
}
