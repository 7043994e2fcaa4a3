/**
 * One round of connecting: each target (the nodes of a cluster) tried once, from the given one on,
 * wrapping around, until one answers. The connection's socket options are set here.
 */
import * as amqp from 'amqplib';
import type { ChannelModel } from 'amqplib';
import { describeConnectionError } from './errors';
import type { ConnectTarget } from './settings';

/** A socket that has not finished the AMQP handshake by then counts as not answering. */
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * What the socket buffers before amqplib's muxer stops moving frames to it (Node's default: 16 KiB).
 * A batch of publishes (the outbox relay's, ConfirmPublisher.sendBatch) is written with the socket
 * corked, in one system call instead of one per frame, as long as its frames fit: 100 events of 1 KB
 * are about 120 KiB. Bounded all the same: past it, publishes wait for the drain as before.
 */
const SOCKET_WRITE_HWM = 256 * 1024;

/** What a round needs of the connection's options. */
export interface DialOptions {
  /** Passed to amqplib's connect (TLS material, …). */
  socketOptions?: Record<string, unknown>;
  connectionName: string;
}

/**
 * The first target that answers, with its connection; or why each failed; or undefined when the
 * connection began stopping meanwhile (a connection made after that is closed again).
 */
export async function dialRound(targets: readonly ConnectTarget[], start: number, options: DialOptions, stopping: () => boolean): Promise<{ model: ChannelModel; target: ConnectTarget } | { failures: string[] } | undefined> {
  const failures: string[] = [];
  const round = [...targets.slice(start), ...targets.slice(0, start)];
  for (const target of round) {
    let model: ChannelModel;
    try {
      // writableHighWaterMark goes to net.Socket (amqplib passes its socket options on); not in amqplib's types.
      const socketOptions: Record<string, unknown> = {
        writableHighWaterMark: SOCKET_WRITE_HWM,
        ...options.socketOptions,
        timeout: CONNECT_TIMEOUT_MS,
        clientProperties: { connection_name: options.connectionName },
      };
      model = await amqp.connect(target.url, socketOptions);
    } catch (err) {
      const why = describeConnectionError(err as Error, target);
      failures.push(targets.length > 1 ? `${target.address}: ${why}` : why);
      if (stopping()) return undefined;
      continue;
    }
    if (stopping()) {
      await model.close().catch(() => undefined);
      return undefined;
    }
    return { model, target };
  }
  return { failures };
}
