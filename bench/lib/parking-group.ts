/**
 * The parking-groups benchmark: `count` parked 1 KB messages of a handful of reasons (each with
 * variable parts: amounts, ids, quoted names, times) grouped by a park-replay node in a Node-RED
 * process of its own (parking-group-child.ts): how long the grouping takes and how much memory the
 * Node-RED process needs for it (its peak RSS while grouping, and that peak above the idle process).
 * The target for 100 000 messages: ≤ 10 s and ≤ 100 MiB.
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import type { ChannelModel } from 'amqplib';
import type { Names } from '../../test/helpers/flows';
import { AMQP_URL, messageProperties, preload, withTimeout } from './common';

export interface ParkingGroupRun {
  count: number;
  seconds: number;
  /** The Node-RED process's RSS: idle before, and the peak while grouping (bytes). */
  rssBefore: number;
  rssPeak: number;
  grouped: number;
  groups: number;
}

/** Five kinds of failure, each reason with its own variable parts: five groups. */
function reason(i: number): string {
  switch (i % 5) {
    case 0:
      return `amount ${1000 + (i % 977)}.${i % 100} is over the ${500 + (i % 13) * 100} limit`;
    case 1:
      return `customer 'cust-${i}' unknown`;
    case 2:
      return `timeout after ${1000 + (i % 5000)}ms calling the bank`;
    case 3:
      return `order ${i.toString(16).padStart(8, 'a')}-0000-4000-8000-${String(i).padStart(12, '0')} rejected at 2026-01-01T10:${String(i % 60).padStart(2, '0')}:00.000Z`;
    default:
      return `card ending ${String(i % 10000).padStart(4, '0')} declined: "insufficient funds"`;
  }
}

export async function parkingGroupRun(model: ChannelModel, topo: Names, count: number, body: Buffer, log: (line: string) => void): Promise<ParkingGroupRun> {
  const start = Date.UTC(2026, 0, 1, 10);
  await preload(model, topo.parkingQueue, count, body, (i) => ({
    ...messageProperties(i),
    headers: { 'park-reason': reason(i), 'park-time': new Date(start + i * 10).toISOString(), 'park-original-exchange': '', 'park-original-routing-key': topo.mainQueue, 'retry-attempt': 3 },
  }));
  log(`   parking groups: ${count} parked 1 KB messages preloaded`);
  const child = fork(path.join(__dirname, 'parking-group-child.ts'), [], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    env: { ...process.env, AMQP_URL, BENCH_PG_TOPOLOGY: JSON.stringify(topo) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  type Reply = { type: 'result'; seconds: number; rssBefore: number; rssPeak: number; grouped: number; groups: number } | { type: 'error'; error: string };
  const reply = new Promise<Reply>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Reply));
    child.once('exit', (code) => reject(new Error(`parking groups child exited (${String(code)}) without a result`)));
  });
  try {
    const m = await withTimeout(reply, 300_000, 'parking groups child');
    if (m.type === 'error') throw new Error(`parking groups child: ${m.error}`);
    if (m.grouped !== count) throw new Error(`parking groups: grouped ${m.grouped} of ${count}`);
    return { count, seconds: m.seconds, rssBefore: m.rssBefore, rssPeak: m.rssPeak, grouped: m.grouped, groups: m.groups };
  } finally {
    if (child.exitCode === null) child.kill();
  }
}
