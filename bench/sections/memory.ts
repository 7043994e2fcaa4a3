/**
 * Memory: the package's consumer → ack flow, raw amqplib doing the same work, and that raw
 * consumer's msg through one hop of the same Node-RED runtime, each in a child process of its own
 * (lib/memory-child.ts). The parent publishes the batches; the child reports memory after a full GC
 * before any message, after the first batch and at the end.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Names } from '../../test/helpers/flows';
import { AMQP_URL, preload, withTimeout } from '../lib/common';
import * as S from '../lib/scenarios';
import { MB, PLAN, PREFETCH, log } from '../config';
import type { Bench, MemoryRun, MemorySnapshot } from '../types';

type Mode = 'package' | 'raw' | 'nodered';
type Reply = { type: string; error?: string; mem?: MemorySnapshot; acks?: number };

/** The child, and `next(type)`: its next reply of that type (an error reply, a timeout or its exit throws). */
function startChild(topo: Names, mode: Mode): { child: ChildProcess; exited: Promise<unknown>; next: (type: string, ms?: number) => Promise<Reply> } {
  const child = fork(path.join(__dirname, '..', 'lib', 'memory-child.ts'), [], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    env: { ...process.env, AMQP_URL, BENCH_MEM_TOPOLOGY: JSON.stringify(topo), BENCH_MEM_PREFETCH: String(PREFETCH), BENCH_MEM_MODE: mode },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const replies: Reply[] = [];
  let waiter: (() => void) | undefined;
  child.on('message', (reply) => {
    const m = reply as Reply;
    if (m.type === 'error') log(`   memory child: ${m.error}`);
    replies.push(m);
    if (waiter) waiter();
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const next = async (type: string, ms = 120_000): Promise<Reply> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const i = replies.findIndex((m) => m.type === type || m.type === 'error');
      if (i >= 0) {
        const m = replies.splice(i, 1)[0]!;
        if (m.type === 'error') throw new Error(`memory child: ${String(m.error)}`);
        return m;
      }
      if (Date.now() > deadline) throw new Error(`memory child: no '${type}' within ${ms / 1000} s`);
      await withTimeout(
        Promise.race([
          new Promise<void>((resolve) => {
            waiter = resolve;
          }),
          exited.then(() => Promise.reject(new Error('memory child exited'))),
        ]),
        ms,
        `memory child '${type}'`,
      );
    }
  };
  return { child, exited, next };
}

/** One memory run in a child process of its own. */
async function memoryRun(b: Bench, topo: Names, mode: Mode): Promise<MemoryRun> {
  const { batches, batchSize } = PLAN.memory;
  const { child, exited, next } = startChild(topo, mode);
  try {
    await next('ready');
    child.send({ cmd: 'snapshot' });
    const before = (await next('snapshot')).mem!;
    let warm: MemorySnapshot | undefined;
    let total = 0;
    for (let i = 0; i < batches; i += 1) {
      await preload(b.model, topo.mainQueue, batchSize, b.body(1024));
      total += batchSize;
      child.send({ cmd: 'wait', acks: total });
      await next('acked', Math.max(120_000, batchSize * 10));
      if (i === 0) {
        child.send({ cmd: 'snapshot' });
        warm = (await next('snapshot')).mem!;
      }
      log(`   memory (${mode}): ${total} msgs consumed and acked`);
    }
    child.send({ cmd: 'snapshot' });
    const end = (await next('snapshot')).mem!;
    log(`   memory (${mode}): rss ${(before.rss / MB).toFixed(1)} → ${(end.rss / MB).toFixed(1)} MiB, heap ${(before.heapUsed / MB).toFixed(1)} → ${(end.heapUsed / MB).toFixed(1)} MiB`);
    return { before, warm: warm ?? before, end, total, batchSize };
  } finally {
    if (child.connected) child.send({ cmd: 'exit' });
    await withTimeout(exited, 15_000, 'memory child exit').catch(() => child.kill());
  }
}

export async function memory(b: Bench): Promise<void> {
  const { extra } = b.results;
  const topo = b.names.topology('memory');
  await S.declareTopology(b.ctx, topo);
  extra.memory = await memoryRun(b, topo, 'package');
  extra.rawMemory = await memoryRun(b, topo, 'raw');
  extra.nodeRedMemory = await memoryRun(b, topo, 'nodered');
}
