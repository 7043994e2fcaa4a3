/**
 * `retry console`: the operator's console of one retry configuration as msgs, for a Dashboard 2.0
 * page (or any flow). On a msg (msg.topic) or every few seconds it sends the parking groups (output 1,
 * rows for a ui-table), the consumers' history (output 2, points for a ui-chart) and their state with
 * the kill switch (output 3, a line for a ui-text); a replay or purge of a group first asks (output 4,
 * for a ui-notification with a confirm button) and runs once confirmed, saying what it did (output 5).
 *
 * The composition root: reads the node's properties and its retry configuration, and builds what
 * answers the topics (topics.ts) and the node's controller (controller.ts).
 */
import { translator } from '../shared/i18n';
import type { Node, NodeAPI, NodeDef } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import { consoleSettings } from './properties';
import { findRetryConfig } from '../shared/retry-config-node';
import { ConsoleController } from './controller';
import { ConsoleTopics } from './topics';

export = function register(RED: NodeAPI): void {
  const t = translator(RED);

  function RetryConsole(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const config = findRetryConfig(RED, def.config);
    const { every, minutes, series, problem } = consoleSettings(def);
    if (problem) node.status({ fill: 'red', shape: 'ring', text: problem });
    new ConsoleController(node, new ConsoleTopics(RED, node, config, { minutes, series }, t), t, every);
  }
  RED.nodes.registerType(NODE_TYPE.retryConsole, RetryConsole);
};
