/** The deploy warning of a retry-config with classic queues on a cluster (issue 53), with a fake management answer. */
import assert from 'node:assert/strict';
import { classicOnClusterWarning, warnClassicOnCluster } from '../../../../src/nodes/retry-config/cluster-warning';
import { topologyFromDefinition } from '../../../../src/nodes/shared/topology-definition';
import type { Translate } from '../../../../src/nodes/shared/i18n';

const def = { mode: 'declare', mainQueue: 'orders', retryDelay: '5000', maxAttempts: 3 };
const t: Translate = (key, args) => `${key} ${JSON.stringify(args)}`;
const nodes = (names: string[]) => ({ clusterNodes: () => Promise.resolve(names) });

describe('retry-config: the warning for classic queues on a cluster', () => {
  it('names the configuration, the nodes and the classic queues on a cluster of three nodes', async () => {
    const text = await classicOnClusterWarning(t, 'orders config', topologyFromDefinition(def), nodes(['rabbit@a', 'rabbit@b', 'rabbit@c']));
    assert.equal(text, 'retry-config.warn.classicOnCluster {"name":"orders config","size":3,"nodes":"rabbit@a, rabbit@b, rabbit@c","queues":"orders, orders.parking"}');
  });

  it('says nothing on one node, or with quorum queues', async () => {
    assert.equal(await classicOnClusterWarning(t, 'c', topologyFromDefinition(def), nodes(['rabbit@one'])), undefined);
    assert.equal(await classicOnClusterWarning(t, 'c', topologyFromDefinition({ ...def, queueType: 'quorum' }), nodes(['rabbit@a', 'rabbit@b'])), undefined);
  });

  it('warns the node once, and not at all without an API, when the API fails or in check mode', async () => {
    const warned: string[] = [];
    const node = { warn: (text: string) => warned.push(text) };
    await warnClassicOnCluster(node, t, 'c', topologyFromDefinition(def), nodes(['rabbit@a', 'rabbit@b']));
    assert.equal(warned.length, 1);
    await warnClassicOnCluster(node, t, 'c', topologyFromDefinition(def), undefined);
    await warnClassicOnCluster(node, t, 'c', topologyFromDefinition(def), { clusterNodes: () => Promise.reject(new Error('down')) });
    await warnClassicOnCluster(node, t, 'c', topologyFromDefinition({ ...def, mode: 'check' }), nodes(['rabbit@a', 'rabbit@b']));
    assert.equal(warned.length, 1);
  });

  it('reads the English text from the catalog with its parameters', async () => {
    const { translator } = await import('../../../../src/nodes/shared/i18n');
    const english = translator({ _: (key: string) => key });
    const text = await classicOnClusterWarning(english, 'orders config', topologyFromDefinition(def), nodes(['rabbit@a', 'rabbit@b', 'rabbit@c']));
    assert.match(text ?? '', /^retry configuration 'orders config': the broker is a cluster of 3 nodes \(rabbit@a, rabbit@b, rabbit@c\), but orders, orders.parking are classic queues/);
  });
});
