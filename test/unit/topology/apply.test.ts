import assert from 'node:assert/strict';
import { planTopology, type RetryTopologyConfig } from '../../../src/lib/topology/plan';
import type { Channel } from 'amqplib';
import { declareTopology, FIRST_DIFFERENCE_ONLY, type ChannelRunner, type DefinitionReader } from '../../../src/lib/topology/apply';
import { seedTopology } from '../fixtures/topology-seed';

const seed: RetryTopologyConfig = { ...seedTopology };
/** The way out of a queue whose arguments differ, as the sentences end. */
const wayOut = (queue: string): string =>
  ` (a queue's arguments cannot be changed: move its messages elsewhere, delete '${queue}' and redeploy, or use another queue name; see "Mismatches" in the topology guide)`;

describe('a declare refused (406) for a queue', () => {
  const plan = planTopology(seed);
  const ttlRefused = Object.assign(new Error("PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'retry-queue' in vhost '/': received the value '3000' of type 'signedint' but current is the value '1000' of type 'signedint'"), { code: 406 });
  const channel = {
    assertExchange: () => Promise.resolve(),
    bindQueue: () => Promise.resolve(),
    assertQueue: (name: string) => (name === 'retry-queue' ? Promise.reject(ttlRefused) : Promise.resolve()),
  } as unknown as Channel;
  const run: ChannelRunner = (work) => work(channel);
  const refused = (reader?: DefinitionReader): Promise<string> => declareTopology(run, plan, reader).then(() => 'declared', (err: unknown) => (err as Error).message);

  it('with the management API: looks the queue up and says every difference', async () => {
    const reader: DefinitionReader = { queueArguments: () => Promise.resolve({ 'x-message-ttl': 1000, 'x-dead-letter-exchange': 'elsewhere' }), exchangeType: () => Promise.resolve(undefined) };
    assert.equal(
      await refused(reader),
      "queue 'retry-queue': x-dead-letter-exchange is 'elsewhere' on the broker, config says 'main-exchange'; x-message-ttl is 1000 on the broker, config says 3000" + wayOut('retry-queue'),
    );
  });

  it('without it (or when it does not answer): the broker\'s one difference, and that check mode lists them all', async () => {
    const single = "queue 'retry-queue': x-message-ttl is '1000' on the broker, config says '3000'" + wayOut('retry-queue') + '; ' + FIRST_DIFFERENCE_ONLY;
    assert.equal(await refused(), single);
    const down: DefinitionReader = { queueArguments: () => Promise.resolve(undefined), exchangeType: () => Promise.resolve(undefined), unavailable: () => Promise.resolve('management API did not answer') };
    assert.equal(await refused(down), single);
    assert.match(FIRST_DIFFERENCE_ONLY, /check mode with the management API URL set on the broker lists them all/);
  });
});
