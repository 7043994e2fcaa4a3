/** Issue 52: an old consumer or publisher with no broker selected (or one not in the flows) is reported, whatever its package. */
import assert from 'node:assert/strict';
import { convertFlows, type FlowNode } from '../../../src/migrate';

const at = { z: 'tab', x: 100, y: 100 };
const notesOf = (flows: FlowNode[], id: string): string => convertFlows(flows).report.find((e) => e.id === id)?.notes.join('; ') ?? '';

describe('converted consumers and publishers without a broker', function () {
  const abreits = (server: string): FlowNode[] => [
    { id: 'ai', type: 'amqp in', ...at, iotype: '4', ioname: 'orders', server, wires: [[]] },
    { id: 'ao', type: 'amqp out', ...at, iotype: '4', ioname: 'orders', server, wires: [] },
  ];

  it('abreits and amqp-ack (server ""): said, with where to choose one', function () {
    for (const extra of [[], [{ id: 'ack', type: 'amqp ack', ...at, server: '', wires: [] }]]) {
      const flows = [...abreits(''), ...extra];
      assert.match(notesOf(flows, 'ai'), /^no broker was selected: choose a retry-broker in its retry-config/);
      assert.match(notesOf(flows, 'ao'), /^no broker was selected: choose a retry-broker in it(;|$)/);
    }
  });

  it('MeowWolf\'s, as before', function () {
    const flows: FlowNode[] = [{ id: 'mi', type: 'amqp-in', ...at, broker: '', exchangeName: '', exchangeType: 'direct', queueName: 'q', noAck: true, wires: [[]] }];
    assert.match(notesOf(flows, 'mi'), /no broker was selected/);
  });

  it('a broker id that is not in the flows', function () {
    assert.match(notesOf(abreits('gone'), 'ai'), /its broker 'gone' is not in these flows: choose a retry-broker in its retry-config/);
    assert.doesNotMatch(notesOf([{ id: 'gone', type: 'amqp-server', host: 'h' }, ...abreits('gone')], 'ai'), /broker/);
  });
});
