/** Broker-native delayed retry (RabbitMQ 4.3+) against the TTL retry path (lib/native-retry.ts); skipped, with the reason, on older brokers. */
import { NATIVE_RETRY_VARIANTS, brokerVersion, declareNativeRetry, nativeRetryRun, nativeRetrySkip } from '../lib/native-retry';
import { PLAN, PREFETCH, log } from '../config';
import { summarize, variants } from '../harness';
import type { Bench, Variant } from '../types';

export async function nativeRetry(b: Bench): Promise<void> {
  const { ctx, model, names, load } = b;
  const { extra } = b.results;
  const skip = nativeRetrySkip(brokerVersion(model));
  if (skip !== undefined) {
    log(`   skipped: ${skip}`);
    extra.nativeRetry = { skipped: skip };
    return;
  }
  const count = PLAN.nativeRetry;
  const topos = NATIVE_RETRY_VARIANTS.map((v) => names.topology(`native-${v.key}`));
  for (const [i, v] of NATIVE_RETRY_VARIANTS.entries()) {
    const topo = topos[i]!;
    await declareNativeRetry(ctx, topo, v);
    // Warm-up of the variant's own settle path, not recorded.
    await load(topo, 1024, PLAN.warmup)();
    await nativeRetryRun(ctx, topo, v, PLAN.warmup, PREFETCH);
  }
  const runs = await variants(
    'native-retry',
    NATIVE_RETRY_VARIANTS.map((v, i): Variant => [v.label, count, load(topos[i]!, 1024, count), () => nativeRetryRun(ctx, topos[i]!, v, count, PREFETCH)]),
  );
  extra.nativeRetry = { count, rows: NATIVE_RETRY_VARIANTS.map((v, i) => ({ label: v.label, ...summarize(runs[i]!) })) };
}
