import assert from 'node:assert/strict';

describe('one shared connection for many nodes', () => {
  it('takes a listener per consumer session for any number of sessions, without a memory-leak warning in the log', async () => {
    const { BrokerConnection } = await import('../../../src/lib/connection/broker-connection');
    const connection = new BrokerConnection({ url: 'amqp://127.0.0.1:1', connectionName: 'listeners test', reconnect: { initialMs: 1000, maxMs: 1000 } });
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      // Each consumer session listens for 'connected' and 'disconnected'; a flow may have dozens on one broker.
      for (let i = 0; i < 40; i++) {
        connection.on('connected', () => undefined);
        connection.on('disconnected', () => undefined);
      }
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings, []);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
