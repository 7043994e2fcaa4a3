/**
 * The history benchmark (issue 40): how much memory 300 consumers' full 24 h history takes, in a
 * process of its own (history-child.cjs, plain CommonJS without tsx) so nothing else moves its RSS. The target: ≤ 10 MiB.
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import { withTimeout } from './common';

export interface HistoryMemoryRun {
  consumers: number;
  minutes: number;
  fillSeconds: number;
  /** Bytes the rings' typed arrays hold. */
  ringBytes: number;
  /** The process's RSS after a full GC, before the consumers and with their full history (bytes). */
  rssBefore: number;
  rssAfter: number;
  heapBefore: number;
  heapAfter: number;
  /** V8's young generation (committed), before and after: its sizing, not the history. */
  youngBefore: number;
  youngAfter: number;
}

export async function historyMemoryRun(): Promise<HistoryMemoryRun> {
  const child = fork(path.join(__dirname, 'history-child.cjs'), [], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  type Reply = (HistoryMemoryRun & { type: 'result'; served: number }) | { type: 'error'; error: string };
  const reply = new Promise<Reply>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Reply));
    child.once('exit', (code) => reject(new Error(`history child exited (${String(code)}) without a result`)));
  });
  try {
    const m = await withTimeout(reply, 120_000, 'history child');
    if (m.type === 'error') throw new Error(`history child: ${m.error}`);
    if (m.served !== m.consumers) throw new Error(`history: served ${m.served} of ${m.consumers} consumers`);
    return { consumers: m.consumers, minutes: m.minutes, fillSeconds: m.fillSeconds, ringBytes: m.ringBytes, rssBefore: m.rssBefore, rssAfter: m.rssAfter, heapBefore: m.heapBefore, heapAfter: m.heapAfter, youngBefore: m.youngBefore, youngAfter: m.youngAfter };
  } finally {
    if (child.exitCode === null) child.kill();
  }
}
