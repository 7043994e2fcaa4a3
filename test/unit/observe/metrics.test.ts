import assert from 'node:assert/strict';
import { DURATION_BUCKETS_S, RetryMetrics } from '../../../src/lib/observe/metrics';
import { MINUTE_MS } from '../../../src/lib/observe';

/** The sample lines of one metric, without HELP/TYPE. */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

/** A clock the test moves by hand, starting at a whole minute. */
function clock(start = 1_000 * MINUTE_MS) {
  let now = start;
  return { now: () => now, to: (ms: number) => (now = ms), plus: (ms: number) => (now += ms) };
}

describe('metrics', () => {
  it('counts settles per queue and outcome, with OpenTelemetry names, in Prometheus text', () => {
    const metrics = new RetryMetrics();
    const orders = metrics.counters('orders');
    orders.record('acked', 3);
    orders.record('acked', 40);
    orders.record('parked', 20_000);
    orders.record('parked', 5, 'permanent');
    orders.record('retried', 5, 'transient');
    metrics.replayed('orders');
    const text = metrics.render();
    assert.match(text, /^# HELP messaging_client_consumed_messages_total .*\n# TYPE messaging_client_consumed_messages_total counter\n/);
    assert.deepEqual(samples(text, 'messaging_client_consumed_messages_total'), [
      'messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="orders",outcome="acked",kind="none"} 2',
      'messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="orders",outcome="acked",kind="done"} 0',
      'messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="orders",outcome="retried",kind="none"} 0',
      'messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="orders",outcome="retried",kind="transient"} 1',
      'messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="orders",outcome="parked",kind="none"} 1',
      'messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="orders",outcome="parked",kind="transient"} 0',
      'messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="orders",outcome="parked",kind="permanent"} 1',
      'messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="orders",outcome="duplicate",kind="none"} 0',
      'messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="orders",outcome="replayed",kind="none"} 1',
    ]);
    // A combination no settle makes today still shows once counted.
    orders.record('acked', 1, 'transient');
    assert.ok(metrics.render().includes('messaging_client_consumed_messages_total{messaging_system="rabbitmq",queue="orders",outcome="acked",kind="transient"} 1\n'));
    assert.match(text, /# TYPE messaging_process_duration_seconds histogram\n/);
    const acked = samples(text, 'messaging_process_duration_seconds_bucket').filter((l) => l.includes('outcome="acked"'));
    assert.equal(acked.length, DURATION_BUCKETS_S.length + 1);
    // Cumulative: 3 ms is in every bucket, 40 ms from le=0.05 on.
    assert.equal(acked[0], 'messaging_process_duration_seconds_bucket{messaging_system="rabbitmq",queue="orders",outcome="acked",le="0.005"} 1');
    assert.equal(acked[3], 'messaging_process_duration_seconds_bucket{messaging_system="rabbitmq",queue="orders",outcome="acked",le="0.05"} 2');
    assert.equal(acked[acked.length - 1], 'messaging_process_duration_seconds_bucket{messaging_system="rabbitmq",queue="orders",outcome="acked",le="+Inf"} 2');
    // 20 s is over the last bound: only +Inf, the count and the sum have it (the 5 ms park is in every bucket).
    assert.ok(text.includes('messaging_process_duration_seconds_bucket{messaging_system="rabbitmq",queue="orders",outcome="parked",le="10"} 1\n'));
    assert.ok(text.includes('messaging_process_duration_seconds_bucket{messaging_system="rabbitmq",queue="orders",outcome="parked",le="+Inf"} 2\n'));
    const sum = /messaging_process_duration_seconds_sum\{messaging_system="rabbitmq",queue="orders",outcome="acked"\} (\S+)\n/.exec(text);
    assert.ok(sum && Math.abs(Number(sum[1]) - 0.043) < 1e-9, String(sum?.[1]));
    assert.ok(text.includes('messaging_process_duration_seconds_count{messaging_system="rabbitmq",queue="orders",outcome="acked"} 2\n'));
    assert.ok(text.endsWith('\n'));
  });

  it('reads the gauges of live consumers and brokers at render time, and forgets removed ones', () => {
    const metrics = new RetryMetrics();
    let inFlight = 4;
    const remove = metrics.addConsumer({
      queue: 'orders',
      parkingQueue: 'orders.parking',
      inFlight: () => inFlight,
      depths: () => ({ main: 7, retry: { 'orders.retry.1s': 2, 'orders.retry.10s': null }, parking: 5 }),
    });
    metrics.addConsumer({ queue: 'orders', parkingQueue: 'orders.parking', inFlight: () => 1, depths: () => undefined });
    metrics.addBroker({ id: 'b1', broker: 'amqp://mq:5672', buffer: () => ({ messages: 12, bytes: 100, blocked: true }) });
    inFlight = 5;
    const text = metrics.render();
    assert.deepEqual(samples(text, 'rabbitmq_retry_in_flight_messages'), ['rabbitmq_retry_in_flight_messages{queue="orders"} 6']);
    assert.deepEqual(samples(text, 'rabbitmq_retry_parking_messages'), ['rabbitmq_retry_parking_messages{queue="orders",parking_queue="orders.parking"} 5']);
    assert.deepEqual(samples(text, 'rabbitmq_retry_queue_messages'), [
      'rabbitmq_retry_queue_messages{queue="orders",role="main",main_queue="orders"} 7',
      'rabbitmq_retry_queue_messages{queue="orders.retry.1s",role="retry",main_queue="orders"} 2',
      'rabbitmq_retry_queue_messages{queue="orders.parking",role="parking",main_queue="orders"} 5',
    ]);
    assert.deepEqual(samples(text, 'rabbitmq_retry_publish_buffer_messages'), ['rabbitmq_retry_publish_buffer_messages{broker="amqp://mq:5672",id="b1"} 12']);
    assert.deepEqual(samples(text, 'rabbitmq_retry_broker_blocked'), ['rabbitmq_retry_broker_blocked{broker="amqp://mq:5672",id="b1"} 1']);
    remove();
    assert.deepEqual(samples(metrics.render(), 'rabbitmq_retry_parking_messages'), []);
    // Counters outlive the consumer: Prometheus counters never go back.
    assert.equal(samples(metrics.render(), 'messaging_client_consumed_messages_total').length, 9);
  });

  it('escapes label values', () => {
    const metrics = new RetryMetrics();
    metrics.counters('a"b\\c\nd').record('acked', 1);
    assert.ok(metrics.render().includes('queue="a\\"b\\\\c\\nd"'));
  });

  it('counts replays per main queue', () => {
    const metrics = new RetryMetrics();
    metrics.replayed('q');
    metrics.replayed('q');
    assert.equal(metrics.counters('q').consumed.replayed, 2);
    assert.equal(metrics.counters('other').consumed.replayed, 0);
  });
});

describe('the circuit gauge', () => {
  it('1 for the state now, 0 for the others, per consumer with the kill switch on', () => {
    const metrics = new RetryMetrics();
    let state: 'closed' | 'open' | 'probing' = 'open';
    metrics.addConsumer({ queue: 'orders', parkingQueue: 'orders.parking', inFlight: () => 0, depths: () => undefined, consumer: 'n1', circuit: () => state });
    metrics.addConsumer({ queue: 'orders', parkingQueue: 'orders.parking', inFlight: () => 0, depths: () => undefined });
    const lines = (): string[] => metrics.render().split('\n').filter((l) => l.startsWith('rabbitmq_retry_circuit_state{'));
    assert.deepEqual(lines(), [
      'rabbitmq_retry_circuit_state{queue="orders",consumer="n1",state="closed"} 0',
      'rabbitmq_retry_circuit_state{queue="orders",consumer="n1",state="open"} 1',
      'rabbitmq_retry_circuit_state{queue="orders",consumer="n1",state="probing"} 0',
    ]);
    state = 'probing';
    assert.ok(lines().includes('rabbitmq_retry_circuit_state{queue="orders",consumer="n1",state="probing"} 1'));
    assert.match(metrics.render(), /# TYPE rabbitmq_retry_circuit_state gauge/);
  });
});

describe('RetryMetrics: a consumer recorder', () => {
  it('counts a settle for Prometheus (by queue) and in the consumer history (duplicate as duplicates)', () => {
    const m = new RetryMetrics(clock().now);
    const r = m.consumer({ consumer: 'c1', config: 'cfg', queue: 'orders' });
    r.record('acked', 5);
    r.record('duplicate', 1);
    r.record('parked', 2, 'permanent');
    r.depth(7);
    m.replayed('orders', 'cfg');
    assert.deepEqual(m.counters('orders').consumed, { acked: 1, retried: 0, parked: 1, duplicate: 1, replayed: 1 });
    const s = m.history.read({ minutes: 1 })[0];
    assert.deepEqual([s?.acked, s?.duplicates, s?.parked, s?.replayed, s?.depth], [[1], [1], [1], [1], [7]]);
    r.close();
    assert.equal(m.history.read()[0]?.open, false);
  });
});
