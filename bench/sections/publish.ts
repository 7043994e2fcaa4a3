/** Publish with confirms: retry-publish against a raw ConfirmChannel, and Node-RED alone doing the raw side's publish. */
import { purge } from '../lib/common';
import * as S from '../lib/scenarios';
import { PLAN, WINDOW } from '../config';
import { pair } from '../harness';
import type { Bench } from '../types';

export async function publish(b: Bench): Promise<void> {
  const { ctx, model, admin, names } = b;
  const queue = names.queue('publish');
  await admin.assertQueue(queue, { durable: true });
  const count = PLAN.publish;
  await pair(
    b.results,
    'publish+confirm',
    `1 KB, ${WINDOW} in flight`,
    count,
    () => purge(model, queue),
    () => S.rawPublish(ctx, { queue, count, window: WINDOW, payload: ctx.body1k }),
    () => S.pkgPublish(ctx, { queue, count, window: WINDOW, payload: ctx.body1k }),
    undefined,
    undefined,
    () => S.nodeRedAlonePublish(ctx, { queue, count, window: WINDOW, payload: ctx.body1k }),
  );
  await purge(model, queue);
}
