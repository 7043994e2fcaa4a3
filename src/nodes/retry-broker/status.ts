/** The broker node's status: its connection's state, and under back-pressure who blocks and how full the publish buffer is. */
import type { ConnectionState } from '../../lib/connection';
import type { PublishBufferState } from '../../lib/publish';
import { statusKey, type Translate } from '../shared/i18n';
import type { NodeStatus } from '../shared/node-red';

/** The connection's status; under back-pressure it says who blocks and how full the publish buffer is. */
export function connectionStatus(state: ConnectionState, buffer: PublishBufferState | undefined, t: Translate): NodeStatus {
  if (!buffer || (buffer.blockedBy === undefined && buffer.messages === 0)) return phaseStatus(state, t, statusKey);
  // Followed by the buffer's fill: one text, translated here.
  const status = phaseStatus(state, t, t);
  const fill = buffer.messages > 0 ? t('retry-broker.status.buffer', { messages: buffer.messages, max: buffer.limits.maxMessages }) : '';
  if (state.phase === 'connected' && buffer.blockedBy !== undefined) {
    return { fill: 'yellow', shape: 'dot', text: t('retry-broker.status.blocked', { reason: buffer.blockedBy }) + fill };
  }
  return { fill: status.fill === 'green' ? 'yellow' : status.fill, shape: status.shape, text: `${status.text ?? ''}${fill}` };
}

/** `key` gives a parameterless status: as a catalog key the editor translates, or translated here. */
function phaseStatus(state: ConnectionState, t: Translate, key: (key: string) => string): NodeStatus {
  switch (state.phase) {
    case 'connected':
      return state.error ? { fill: 'yellow', shape: 'dot', text: state.error } : { fill: 'green', shape: 'dot', text: key('retry-broker.status.connected') };
    case 'invalid':
      return { fill: 'red', shape: 'ring', text: state.error ?? t('retry-broker.status.invalid') };
    case 'connecting':
      return { fill: 'yellow', shape: 'ring', text: key('retry-broker.status.connecting') };
    case 'waiting': {
      // Rounded: a wait of 1.01 s reads 1 s, not 2; never 0 s.
      const seconds = Math.max(1, Math.round((state.retryInMs ?? 0) / 1000));
      return { fill: 'red', shape: 'ring', text: t('retry-broker.status.waiting', { error: state.error ?? t('retry-broker.status.disconnected'), seconds }) };
    }
    default:
      return { fill: 'grey', shape: 'ring', text: key('retry-broker.status.disconnected') };
  }
}
