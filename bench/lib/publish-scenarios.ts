/** The publish runs (see scenarios.ts): raw confirm channel, Node-RED alone and the package's retry-publish, and a pair of Node-RED nodes. */
import { tab } from '../../test/helpers/flows';
import { connect, errorText, rawJsonPublisher, withTimeout, type RunResult } from './common';
import { startNodeRedAlonePublisher } from './nodered-alone';
import { benchHooks, getNode, loadFlow, unloadFlow, type Msg } from './nodered';
import { benchBroker, timed, timeoutFor, type Ctx } from './scenario-base';

export interface PublishCase {
  queue: string;
  count: number;
  window: number;
  payload: unknown;
}

/** Raw ConfirmChannel (rawJsonPublisher): payload JSON-encoded per message, retry-publish's options; `window` in flight. */
export async function rawPublish(_ctx: Ctx, { queue, count, window, payload }: PublishCase): Promise<RunResult> {
  const model = await connect('bench raw publisher');
  try {
    const publisher = await rawJsonPublisher(model, queue);
    const result = await timed(count, () =>
      withTimeout(
        new Promise<void>((resolve, reject) => {
          let sent = 0;
          let confirmed = 0;
          const one = (): void => {
            sent += 1;
            publisher.publish(payload, (err) => {
              if (err) {
                reject(err instanceof Error ? err : new Error(errorText(err)));
                return;
              }
              confirmed += 1;
              if (confirmed === count) resolve();
              else if (sent < count) one();
            });
          };
          for (let k = 0; k < window && sent < count; k += 1) one();
        }),
        timeoutFor(count),
        'raw publisher confirms',
      ),
    );
    if (publisher.returned() > 0) throw new Error(`${publisher.returned()} raw publishes returned unroutable`);
    return result;
  } finally {
    await model.close().catch(() => undefined);
  }
}

/**
 * Sends `count` msgs into a node with `window` in flight; a msg is done when `benchHooks.onSink`
 * sees it at the sink with id `sinkId`.
 */
function pump(count: number, window: number, send: () => void, sinkId = 'sink'): Promise<void> {
  return new Promise((resolve) => {
    let sent = 0;
    let completed = 0;
    benchHooks.onSink = (_msg, id) => {
      if (id !== sinkId) return;
      completed += 1;
      if (completed === count) resolve();
      else if (sent < count) {
        sent += 1;
        send();
      }
    };
    for (let k = 0; k < window && sent < count; k += 1) {
      sent += 1;
      send();
    }
  });
}

/**
 * Feeds the loaded flow's node `id` with node.receive({ payload }), `window` msgs in flight; a msg is
 * done when it reaches the sink. A few msgs untimed first (the package's first ones open its
 * connection's confirm channel), then `count` timed.
 */
async function pumpNode(id: string, what: string, { count, window, payload }: Omit<PublishCase, 'queue'>): Promise<RunResult> {
  const node = getNode(id);
  const send = (): void => node.receive({ payload });
  try {
    await withTimeout(pump(Math.min(window, 10), window, send), 30_000, `${what} warm-up (is the broker reachable?)`);
    return await timed(count, () => withTimeout(pump(count, window, send), timeoutFor(count), `${what} confirms`));
  } finally {
    benchHooks.onSink = undefined;
  }
}

/** retry-publish fed with node.receive(), `window` msgs in flight; a msg is done when it reaches the next node. */
export async function pkgPublish(ctx: Ctx, { queue, ...run }: PublishCase): Promise<RunResult> {
  await loadFlow([
    tab(),
    benchBroker(ctx),
    { id: 'pub', type: 'retry-publish', z: 'flow', broker: 'broker', mode: 'publish', exchange: '', routingKey: queue, persistent: true, contentType: '', declareQueue: '', wires: [['sink']] },
    { id: 'sink', type: 'bench-sink', z: 'flow', wires: [] },
  ]);
  try {
    return await pumpNode('pub', 'retry-publish', run);
  } finally {
    await unloadFlow();
  }
}

/**
 * Node-RED alone: rawPublish's work (the same options, the same return check) done by a node fed the
 * same way as retry-publish, its msg sent on to the next node after the confirm: the package side's
 * hops without the package.
 */
export async function nodeRedAlonePublish(_ctx: Ctx, { queue, ...run }: PublishCase): Promise<RunResult> {
  const publisher = await startNodeRedAlonePublisher(queue);
  try {
    const result = await pumpNode(publisher.node, 'Node-RED alone publisher', run);
    if (publisher.returned() > 0) throw new Error(`${publisher.returned()} Node-RED alone publishes returned unroutable`);
    return result;
  } finally {
    await publisher.stop();
  }
}

// Node-RED's own cost -------------------------------------------------------------------------------

/**
 * bench-source → bench-sink (or → two sinks: fan-out, so Node-RED deep-clones the second copy), with
 * `window` msgs in flight, each built by `makeMsg()`. No broker, no package code: what Node-RED's
 * routing costs per msg in this runtime.
 */
export async function nodeRedPair({ count, window, makeMsg, fanout = false, spies = false }: { count: number; window: number; makeMsg: () => Msg; fanout?: boolean; spies?: boolean }): Promise<RunResult> {
  const wires = fanout ? [['sink', 'sink2']] : [['sink']];
  await loadFlow(
    [tab(), { id: 'src', type: 'bench-source', z: 'flow', wires }, { id: 'sink', type: 'bench-sink', z: 'flow', wires: [] }, { id: 'sink2', type: 'bench-sink', z: 'flow', wires: [] }],
    { spies },
  );
  const src = getNode('src') as Msg;
  try {
    return await timed(count, () => withTimeout(pump(count, window, () => src.emitMsg(makeMsg())), timeoutFor(count), 'Node-RED source → sink'));
  } finally {
    benchHooks.onSink = undefined;
    await unloadFlow();
  }
}
