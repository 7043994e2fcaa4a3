/**
 * The connection's waits on the real broker: a channel close that the connection's death interrupts
 * (amqplib 2.3's `channel.close()` never settles then), and many publishes waiting for a connection.
 */
import assert from 'node:assert/strict';
import * as amqp from 'amqplib';
import { BrokerConnection } from '../../src/lib/connection/broker-connection';
import { closeChannel } from '../../src/lib/amqp/close-channel';
import { AMQP_URL, waitFor } from '../helpers/broker';

/** Kills the connection's socket: no close-ok comes any more, as when the broker or the network goes. */
function killSocket(model: amqp.ChannelModel): void {
  (model.connection as unknown as { stream: { destroy(err: Error): void } }).stream.destroy(new Error('socket killed by the test'));
}

describe('closing a channel when the connection dies (real broker)', function () {
  this.timeout(20_000);

  it("amqplib's own close never settles then; closeChannel resolves", async () => {
    const model = await amqp.connect(AMQP_URL);
    model.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => model.once('close', () => resolve()));
    const plain = await model.createChannel();
    const helped = await model.createChannel();
    for (const ch of [plain, helped]) ch.on('error', () => undefined);

    let plainSettled = false;
    plain.close().then(
      () => (plainSettled = true),
      () => (plainSettled = true),
    );
    const helpedClose = closeChannel(helped, 60_000); // not the timeout: the connection's close ends it
    killSocket(model);
    await closed;
    await helpedClose;
    // The plain close is still pending after the connection closed (and the helper resolved).
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(plainSettled, false);
  });

  it('resolves for a channel that is closed already', async () => {
    const model = await amqp.connect(AMQP_URL);
    model.on('error', () => undefined);
    try {
      const channel = await model.createChannel();
      await channel.close();
      await closeChannel(channel, 60_000);
    } finally {
      await model.close();
    }
  });

  it('closes a BrokerConnection channel whose connection dies during the close', async () => {
    const connection = new BrokerConnection({ url: AMQP_URL, connectionName: 'close-channel test', reconnect: { initialMs: 60_000, maxMs: 60_000 } });
    connection.acquire('test');
    try {
      const model = await connection.whenConnected();
      const channel = await connection.createChannel();
      const closing = closeChannel(channel, 60_000);
      killSocket(model);
      await closing;
    } finally {
      await connection.close();
    }
  });
});

describe('waiting for a connection (real broker)', function () {
  this.timeout(20_000);

  it('many waiting calls add no listener each and all get the connection', async () => {
    const connection = new BrokerConnection({ url: AMQP_URL, connectionName: 'waiters test', reconnect: { initialMs: 1000, maxMs: 1000 } });
    const listeners = connection.listenerCount('connected');
    connection.acquire('test');
    try {
      assert.equal(connection.connection, undefined, 'still connecting');
      const waits = Array.from({ length: 200 }, () => connection.whenConnected());
      assert.equal(connection.listenerCount('connected'), listeners);
      const models = await Promise.all(waits);
      assert.ok(models.every((m) => m === connection.connection));
    } finally {
      await connection.close();
    }
  });

  it('waiting calls fail when the connection is closed for good, and at their own timeout', async () => {
    // Nobody listens on port 1: the connection keeps trying.
    const connection = new BrokerConnection({ url: 'amqp://127.0.0.1:1', connectionName: 'waiters test', reconnect: { initialMs: 60_000, maxMs: 60_000 } });
    connection.acquire('test');
    await waitFor(() => connection.state.phase === 'waiting', 'the first attempt to fail');
    await assert.rejects(connection.whenConnected(1), /not connected to the broker after 0.001 s \(connection refused/);
    const waits = Array.from({ length: 50 }, () => connection.whenConnected(60_000));
    assert.equal(connection.listenerCount('connected'), 0);
    await connection.close();
    for (const wait of waits) await assert.rejects(wait, /the broker connection was closed/);
  });
});

describe('many users of one connection (real broker)', function () {
  this.timeout(20_000);

  it('closes 30 channels at once and follows the buffer from 30 consumers without a MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      if (w.name === 'MaxListenersExceededWarning') warnings.push(w.message);
    };
    process.on('warning', onWarning);
    const connection = new BrokerConnection({ url: AMQP_URL, connectionName: 'many users test', reconnect: { initialMs: 1000, maxMs: 1000 } });
    connection.acquire('test');
    const follow = (): void => undefined;
    try {
      await connection.whenConnected();
      // As 30 consumer nodes on one broker do: each follows the publish buffer, each closes its channel on a redeploy.
      for (let i = 0; i < 30; i += 1) connection.publishers.buffer.on('change', follow);
      const channels = await Promise.all(Array.from({ length: 30 }, () => connection.createChannel()));
      await Promise.all(channels.map((ch) => closeChannel(ch)));
      await new Promise((resolve) => setImmediate(resolve)); // process warnings are emitted on the next tick
      assert.deepEqual(warnings, []);
    } finally {
      connection.publishers.buffer.off('change', follow);
      process.off('warning', onWarning);
      await connection.close();
    }
  });
});
