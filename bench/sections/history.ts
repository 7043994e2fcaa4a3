/** History memory: 300 consumers' full 24 h history in a process of its own (lib/history-memory.ts). */
import { historyMemoryRun } from '../lib/history-memory';
import { MB, log } from '../config';
import type { Bench } from '../types';

export async function history(b: Bench): Promise<void> {
  const h = await historyMemoryRun();
  b.results.extra.history = h;
  log(`   history: ${h.consumers} consumers × ${h.minutes} min, rss +${((h.rssAfter - h.rssBefore) / MB).toFixed(2)} MiB, rings ${(h.ringBytes / MB).toFixed(2)} MiB`);
}
