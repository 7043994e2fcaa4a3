/**
 * The retry consumer's optional second output: one msg per settle outcome (acked, retried, parked,
 * and replayed by a park-replay of the same configuration) and a periodic stats msg. Built only when
 * the output is on; the Prometheus counters are kept either way (see lib/observe/metrics.ts).
 */
import type { ConsumerSession, Settled } from '../../lib/consume';
import type { CircuitChange } from '../../lib/degrade';
import type { ConsumerSessions } from '../shared/consumer-sessions';
import type { OutcomeEvent, QueueDepths } from '../../lib/observe';
import type { NodeMessage } from '../shared/node-red';

export interface StatsPayload {
  event: 'stats';
  queue: string;
  delivered: number;
  acked: number;
  retried: number;
  parked: number;
  duplicates: number;
  replayed: number;
  inFlight: number;
  /** Ready messages per queue at this look; null for a queue that could not be checked. */
  depths: QueueDepths | null;
  /** Deliveries per second since the previous stats msg. */
  consumeRate: number;
  intervalS: number;
}

export function settledEvent(queue: string, settled: Settled): OutcomeEvent {
  const { outcome } = settled;
  return {
    event: outcome.done,
    attempt: outcome.attempt,
    reason: settled.reason === '' || outcome.done === 'acked' ? null : settled.reason,
    queue,
    messageId: settled.messageId,
    durationMs: settled.durationMs,
    kind: settled.kind ?? null,
  };
}

/** Deliveries per second between two samples, to two decimals. */
export function rate(before: number, after: number, elapsedMs: number): number {
  return elapsedMs > 0 ? Math.round(((after - before) * 100_000) / elapsedMs) / 100 : 0;
}

/** Milliseconds from `now` to the next multiple of `everyMs` (never 0: a tick just past a boundary waits for the next). */
export function nextBoundary(now: number, everyMs: number): number {
  return Math.ceil((now + 1) / everyMs) * everyMs - now;
}

/**
 * Sends events and stats on the second output (`send([null, msg])`) until the returned function is
 * called. `statsEveryMs` 0: events only. `replays` false: the configuration's replays are sent by
 * another session of the node (a partitioned consumer sends them once, through its first partition).
 */
export function startEvents(session: ConsumerSession, sessions: ConsumerSessions, queue: string, statsEveryMs: number, send: (msg: NodeMessage) => void, replays = true): () => void {
  const event = (payload: OutcomeEvent): void => send({ topic: payload.event, payload });
  let replayed = 0;
  const onSettled = (settled: Settled): void => event(settledEvent(queue, settled));
  const onReplayed = (payload: OutcomeEvent): void => {
    replayed += 1;
    event(payload);
  };
  // The kill switch's changes of state: `{event: 'circuit', queue, state, previous, reason, failures, settles, restartInS?}`.
  const onCircuit = (change: CircuitChange): void => send({ topic: 'circuit', payload: { event: 'circuit', queue, ...change } });
  session.deliveries.on('settled', onSettled);
  if (replays) sessions.on('replayed', onReplayed);
  session.on('circuit', onCircuit);

  let timer: NodeJS.Timeout | undefined;
  if (statsEveryMs > 0) {
    let last = { at: Date.now(), delivered: session.stats.delivered };
    const report = (): void => {
      void session.queues.look().then((depths) => {
        const stats = session.stats;
        const now = Date.now();
        const payload: StatsPayload = {
          event: 'stats',
          queue,
          delivered: stats.delivered,
          acked: stats.acked,
          retried: stats.retried,
          parked: stats.parked,
          duplicates: stats.duplicates,
          replayed,
          inFlight: stats.inFlight,
          depths: depths ?? null,
          consumeRate: rate(last.delivered, stats.delivered, now - last.at),
          intervalS: Math.round((now - last.at) / 100) / 10,
        };
        last = { at: now, delivered: stats.delivered };
        send({ topic: 'stats', payload });
      });
    };
    // On the interval's wall-clock boundaries, as the parking watch ticks: the stats of every consumer
    // with this interval fall due together and share one look at the broker's queues.
    const arm = (): void => {
      timer = setTimeout(() => {
        arm();
        report();
      }, nextBoundary(Date.now(), statsEveryMs));
      timer.unref?.();
    };
    arm();
  }
  return () => {
    clearTimeout(timer);
    session.deliveries.off('settled', onSettled);
    sessions.off('replayed', onReplayed);
    session.off('circuit', onCircuit);
  };
}
