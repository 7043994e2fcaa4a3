import assert from 'node:assert/strict';
import { DURATION_BUCKETS_S, RetryMetrics } from '../../src/lib/observe/metrics';
import { nextBoundary, rate, settledEvent } from '../../src/nodes/retry-consumer/consumer-events';

/** The sample lines of one metric, without HELP/TYPE. */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
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

describe('consumer events', () => {
  it('turns a settle into the event msg payload', () => {
    assert.deepEqual(settledEvent('orders', { outcome: { done: 'parked', attempt: 3, parkReason: 'max attempts (3) reached', parkedTo: 'p' }, reason: 'max attempts (3) reached', messageId: 'm', durationMs: 12 }), {
      event: 'parked',
      attempt: 3,
      reason: 'max attempts (3) reached',
      queue: 'orders',
      messageId: 'm',
      durationMs: 12,
      kind: null,
    });
    assert.equal(settledEvent('orders', { outcome: { done: 'parked', attempt: 1 }, reason: 'permanent (r): 400', messageId: null, durationMs: 1, kind: 'permanent' }).kind, 'permanent');
    assert.equal(settledEvent('orders', { outcome: { done: 'acked', attempt: 1 }, reason: 'ignored', messageId: null, durationMs: 1 }).reason, null);
    assert.equal(settledEvent('orders', { outcome: { done: 'retried', attempt: 1 }, reason: '', messageId: null, durationMs: 1 }).reason, null);
  });

  it('computes the consume rate per second', () => {
    assert.equal(rate(100, 400, 2000), 150);
    assert.equal(rate(0, 1, 3000), 0.33);
    assert.equal(rate(5, 5, 0), 0);
  });
});

describe('stats on the interval boundary (nextBoundary)', () => {
  it('waits until the next multiple of the interval, so consumers with one interval report together', () => {
    assert.equal(nextBoundary(10_000, 10_000), 10_000, 'exactly on a boundary: the next one');
    assert.equal(nextBoundary(12_345, 10_000), 7_655);
    assert.equal(nextBoundary(19_999, 10_000), 1);
    assert.equal(nextBoundary(1_700_000_004_321, 60_000) + 1_700_000_004_321, 1_700_000_040_000);
  });
});
