/**
 * A running park-replay node: runs each msg's action on its configuration's parking queue, one at a
 * time (a msg while one runs is ignored with a warning), and shows what it did. The connection is held
 * only while working: an idle node keeps none open, and holds no listener or timer to remove on close
 * (a paced replay's progress timer ends with the replay).
 */
import type { ReplayDestination } from '../../lib/parking';
import type { Translate } from '../shared/i18n';
import type { DoneFunction, Node, NodeAPI, NodeMessage, SendFunction } from '../shared/node-red';
import { auditedParkingAction, redirectFrom } from './queue-actions';
import type { RetryConfigNode } from '../shared/retry-config-node';
import { pacedFromFlow } from './paced';
import type { ParkAction, ParkReplaySettings } from './properties';
import { actionOf, resultOf, resultStatus } from './results';

export class ParkReplayController {
  private running = false;

  constructor(
    private readonly RED: NodeAPI,
    private readonly node: Node,
    private readonly config: RetryConfigNode | undefined,
    private readonly settings: ParkReplaySettings,
    private readonly t: Translate,
  ) {
    if (settings.problem) node.status({ fill: 'red', shape: 'ring', text: settings.problem });
    node.on('input', (msg, send, done) => this.input(msg, send, done));
  }

  private input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const { config, node, t } = this;
    const { problem } = this.settings;
    if (problem) return done(new Error(`parking: ${problem}`));
    if (!config?.topology || !config.broker) return done(new Error(`parking: ${config ? config.problems.join('; ') || 'no broker' : 'no retry configuration selected'}`));
    let action: ParkAction;
    let redirect: ReplayDestination | undefined;
    try {
      action = actionOf(this.settings.action, msg);
    } catch (err) {
      return done(err as Error);
    }
    if (this.running) {
      node.warn(`${action}: the parking queue is busy with an earlier msg; this one is ignored`);
      return done();
    }
    this.running = true;
    node.status({ fill: 'blue', shape: 'dot', text: t('park-replay.status.running', { action }) });
    try {
      redirect = action === 'replay' ? redirectFrom(msg.redirect) : undefined;
    } catch (err) {
      this.running = false;
      node.status({ fill: 'red', shape: 'ring', text: t('park-replay.status.failed', { action }) });
      return done(err as Error);
    }
    this.run(config, action, msg, redirect)
      .then(
        (payload) => {
          const result = resultOf(action, payload);
          node.status(resultStatus(result, t));
          msg.payload = result;
          send(msg);
          done();
        },
        (err: unknown) => {
          node.status({ fill: 'red', shape: 'ring', text: t('park-replay.status.failed', { action }) });
          done(err instanceof Error ? err : new Error(String(err)));
        },
      )
      .finally(() => {
        this.running = false;
      });
  }

  private run(config: RetryConfigNode, action: ParkAction, msg: NodeMessage, redirect: ReplayDestination | undefined): Promise<Record<string, unknown>> {
    const { max: configuredMax, resetAttempts, reason } = this.settings;
    const max = typeof msg.max === 'number' && msg.max > 0 ? Math.floor(msg.max) : configuredMax;
    // The node's reason filter, unless the msg brings its own.
    const source = reason !== '' && msg.reason === undefined ? { ...msg, reason } : msg;
    const by = `flow ${this.node.id}`;
    return action === 'replay' && msg.rate !== undefined
      ? pacedFromFlow(this.RED, this.node, config, source, { max, resetAttempts, by, redirect }, this.t)
      : auditedParkingAction(this.RED, action, source, config, { max, resetAttempts, userId: this.node.id, by, redirect });
  }
}
