/**
 * Issue 52: the whole conversion's report tells everything that changed. Every node the converter adds
 * is reported (the comment above a kept node too); a broker shared with old nodes outside the
 * converted tab says they lose it; a function node using the old packages' msg API says what to change.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { convertFlows, reportText, type FlowNode } from '../../../src/migrate';

const FIXTURES = path.resolve(__dirname, '../../fixtures/migrate');
const fixtures = readdirSync(FIXTURES).flatMap((dir) => readdirSync(path.join(FIXTURES, dir)).filter((f) => f.endsWith('.json')).map((f) => path.join(dir, f)));
const at = { z: 'tab', x: 200, y: 200 };
const broker: FlowNode = { id: 'b', type: 'amqp-broker', host: 'mq', port: 5672, vhost: '', tls: false };
const mwIn = (id: string, z: string): FlowNode => ({ id, type: 'amqp-in', z, x: 100, y: 100, name: `in ${id}`, broker: 'b', prefetch: 1, noAck: true, exchangeName: '', exchangeType: 'direct', queueName: `q.${id}`, wires: [[]] });

describe('the conversion and its report (issue 52)', function () {
  it('reports every node it adds, the comment above a kept node too, for every example flow', function () {
    assert.ok(fixtures.length >= 10);
    let comments = 0;
    for (const file of fixtures) {
      const input = JSON.parse(readFileSync(path.join(FIXTURES, file), 'utf8')) as FlowNode[];
      const r = convertFlows(input);
      const inputIds = new Set(input.map((n) => n.id));
      for (const n of r.flows.filter((f) => !inputIds.has(f.id))) {
        const entry = r.report.find((e) => e.id === n.id);
        assert.equal(entry?.outcome, 'added', `${file}: added ${n.type} ${n.id} is in the report`);
        if (n.type === 'comment') comments++;
      }
    }
    assert.ok(comments > 0, 'the examples keep some nodes, with a comment each');
  });

  it('says what the added comment is for and what to do with it', function () {
    const r = convertFlows([broker, { ...mwIn('h', 'tab'), exchangeName: 'x', exchangeType: 'headers' }]);
    const note = r.report.find((e) => e.type === 'comment');
    assert.deepEqual([note?.outcome, note?.for], ['added', 'h']);
    const line = reportText(r).split('\n').find((l) => l.startsWith('added      comment')) ?? '';
    assert.match(line, /^added +comment 'Not converted: a headers exchange bindi…': says why 'in h' was not converted: delete it once the node is replaced$/);
  });

  it('converting one tab: a broker also used by old nodes on other tabs says they lose it and what to do', function () {
    const flows = [{ id: 'tab', type: 'tab' }, { id: 'other', type: 'tab' }, broker, mwIn('one', 'tab'), mwIn('two', 'other')];
    const r = convertFlows(flows, { only: new Set(['tab', 'one']) });
    const entry = r.report.find((e) => e.id === 'b');
    assert.match(entry?.notes.join('; ') ?? '', /1 old node\(s\) not converted still use it \('in two'\) and lose their broker: convert them too before deploying \(their tab, or select them\)$/);
    const whole = convertFlows(flows);
    assert.doesNotMatch(reportText(whole), /not converted still use it/);
  });

  it('names a function node that uses the old msg API, with what to change; other function nodes stay quiet', function () {
    const fn = (id: string, func: string): FlowNode => ({ id, type: 'function', ...at, func, wires: [[]] });
    const r = convertFlows([fn('ack', 'msg.amqpMessage.ackMsg();\nreturn msg;'), fn('manual', 'msg.manualAck = { ackMode: "nack" };\nreturn msg;'), fn('plain', 'return msg;')]);
    const notes = (id: string): string => r.report.find((e) => e.id === id)?.notes.join('; ') ?? '';
    assert.match(notes('ack'), /msg\.amqpMessage\.ackMsg\(\) is gone: send the msg to a retry-settle \(ack\)/);
    assert.match(notes('manual'), /msg\.manualAck/);
    assert.equal(notes('plain'), 'not a node of another AMQP package: unchanged');
  });
});
