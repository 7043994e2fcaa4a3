/**
 * One side of the batch memory figure (batch-memory.ts) in a process of its own: BENCH_BATCH_MEM says
 * which side, the topology (declared by the parent), the items and the body (base64). Prints the
 * HeldMemory as JSON on its last stdout line.
 */
import type { Names } from '../../test/helpers/flows';
import { AMQP_URL, connect, installProbe, makeBody, runTool } from './common';
import { heldSide, type HeldSide } from './batch-memory';
import { packageNodes } from './nodered';

const { side, topo, items, body } = JSON.parse(process.env.BENCH_BATCH_MEM ?? '{}') as { side: HeldSide; topo: Names; items: number; body: string };

runTool(async () => {
  packageNodes();
  const model = await connect('bench batch memory');
  try {
    // The probe counts the acks the package's side waits for; it needs one amqplib channel to find the class it wraps.
    installProbe(await model.createChannel());
    const held = await heldSide(side, { url: AMQP_URL, model, body1k: makeBody(1024) }, model, topo, items, Buffer.from(body, 'base64'));
    process.stdout.write(`${JSON.stringify(held)}\n`);
  } finally {
    await model.close().catch(() => undefined);
  }
});
