/**
 * The relay's pure parts, case by case: the window of batches in flight (room, turn in claim order,
 * idle), what a batch's outcomes make of its rows, the claim statement; and the pipeline itself on a
 * fake database and publisher: the next batch claimed and published while the first one's confirms
 * are outstanding, and the batches' marks committed in the order they were claimed even when the
 * later one is confirmed first.
 */
import assert from 'node:assert/strict';
import { RowPublisher, type Row } from '../../../src/lib/outbox';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function row(seq: number, attempts = 0): Row {
  return { seq: String(seq), id: `e-${seq}`, exchange: 'x', routing_key: 'k', payload: Buffer.from('{}'), headers: null, properties: null, attempts };
}

describe('outbox relay: publishing a batch', () => {
  it('gives each row its outcome: confirmed, refused with the reason, or no confirm within the timeout (one for the batch)', async () => {
    const answers: Record<string, () => Promise<void>> = {
      'e-1': () => Promise.resolve(),
      'e-2': () => Promise.reject(new Error('message was returned unroutable')),
      'e-3': () => new Promise<void>(() => undefined),
      'e-4': () => {
        throw new Error('cannot encode');
      },
    };
    const publisher = { publish: (_x: string, _k: string, _c: Buffer, options: Record<string, unknown>) => answers[String(options.messageId)]!() };
    const outcomes = await new RowPublisher(publisher, 10, undefined).publishAll([row(1), row(2), row(3), row(4)]);
    assert.deepEqual(outcomes, [undefined, 'message was returned unroutable', 'no confirm within 0.01 s', 'cannot encode']);
  });
  it('ends the span of each row once with its outcome, a confirm after the timeout changing nothing', async () => {
    let late: (() => void) | undefined;
    const answers: Record<string, () => Promise<void>> = {
      'e-1': () => Promise.resolve(),
      'e-2': () => Promise.reject(new Error('nacked')),
      'e-3': () =>
        new Promise<void>((resolve) => {
          late = resolve;
        }),
    };
    const ended: string[] = [];
    const tracer = {
      start: (_name: string, _kind: string, attributes: Record<string, unknown>) => {
        const id = String(attributes['messaging.message.id']);
        let failure = '';
        return {
          trace: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
          set: () => undefined,
          fail: (error: unknown) => {
            failure = ` failed: ${String(error)}`;
          },
          end: () => ended.push(`${id}${failure}`),
        };
      },
    };
    const publisher = { publish: (_x: string, _k: string, _c: Buffer, options: Record<string, unknown>) => answers[String(options.messageId)]!() };
    const outcomes = await new RowPublisher(publisher, 10, tracer).publishAll([row(1), row(2), row(3)]);
    late?.();
    await tick();
    assert.deepEqual(outcomes, [undefined, 'nacked', 'no confirm within 0.01 s']);
    assert.deepEqual(ended, ['e-1', 'e-2 failed: nacked', 'e-3 failed: no confirm within 0.01 s']);
  });

  it('resolves at once for an empty batch', async () => {
    assert.deepEqual(await new RowPublisher({ publish: () => Promise.resolve() }, 10, undefined).publishAll([]), []);
  });
});
