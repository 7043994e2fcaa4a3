/**
 * A consumer's kill switch: the circuit (src/lib/degrade) fed by the settles of its deliveries, and
 * its restart timer. It says what changed (`change`); the session does the stopping (as a pause does),
 * the probing with prefetch 1, and the full prefetch again.
 */
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { Circuit, type CircuitChange, type CircuitSettings, type CircuitState } from '../degrade';
import type { Deliveries } from './deliveries';
import type { Settled } from './types';

/** The circuit as the status shows it. */
export interface CircuitView {
  state: CircuitState;
  /** Open: milliseconds until it probes. */
  probeInMs: number;
  /** Probing: successes in a row so far, of `probes`. */
  probed: number;
  probes: number;
}

/**
 * What a settle says about the downstream: failed (true), worked (false), or nothing (undefined). A
 * transient failure counts, a permanent one is the message's fault; without a kind (no error rules),
 * an ack is a success and a retry (retry-settle, the settle timeout) a transient failure, while a park
 * by park-publisher or an invalid body, and a duplicate, say nothing.
 */
export function downstreamFailed(settled: Settled): boolean | undefined {
  switch (settled.kind) {
    case 'transient':
      return true;
    case 'done':
      return false;
    case 'permanent':
      return undefined;
    default:
      return settled.outcome.done === 'acked' ? false : settled.outcome.done === 'retried' ? true : undefined;
  }
}

export class Breaker extends EventEmitter<{ change: [CircuitChange] }> {
  private readonly circuit: Circuit;
  private timer: NodeJS.Timeout | undefined;
  private readonly onSettled = (settled: Settled): void => {
    const failed = downstreamFailed(settled);
    if (failed !== undefined) this.apply(this.circuit.record(failed));
  };

  constructor(
    settings: CircuitSettings,
    private readonly deliveries: Deliveries,
    now: () => number = () => performance.now(),
  ) {
    super();
    this.circuit = new Circuit(settings, now);
    deliveries.on('settled', this.onSettled);
  }

  get state(): CircuitState {
    return this.circuit.state;
  }

  get view(): CircuitView {
    const { circuit } = this;
    return { state: circuit.state, probeInMs: circuit.probeInMs, probed: circuit.probed, probes: circuit.settings.probes };
  }

  /** The prefetch a consumer starts with now: 1 while probing. */
  prefetch(full: number): number {
    return this.circuit.state === 'probing' ? 1 : full;
  }

  /** Closes it by hand (a `resume`). */
  reset(): void {
    this.apply(this.circuit.reset());
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.deliveries.off('settled', this.onSettled);
  }

  private apply(change: CircuitChange | undefined): void {
    if (!change) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (change.state === 'open') this.timer = setTimeout(() => this.apply(this.circuit.probe()), (change.restartInS ?? 0) * 1000);
    this.emit('change', change);
  }
}
