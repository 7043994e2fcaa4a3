/**
 * examples/batch-to-postgres.json (issue 51) as the e2e and browser tests run it: its broker objects
 * and tables renamed for one run, tracked for cleanup, and a fresh Node-RED with the packed package
 * and the variables the example reads (AMQP_URL, DATABASE_URL, RABBITMQ_MANAGEMENT_URL).
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PostgresDatabase } from '../../src/lib/postgres';
import { AMQP_URL, MANAGEMENT_URL, uniqueName, type Broker } from './broker';
import { NodeRedProcess, packPackage, userDirWith } from './node-red-process';
import { DATABASE_URL } from './private-stores';
import { nodeRed4, type NodeRedRuntime } from '../e2e/node-red-runtimes';

/** The broker objects and tables the example names. */
export const BATCH_NAMES = ['rows-exchange', 'rows-checked-queue', 'rows-bisect-queue', 'demo_rows', 'rabbitmq_retry_outbox'] as const;
export type BatchName = (typeof BATCH_NAMES)[number];
/** Its two main queues: (a) per-item outcomes, (b) bisect. */
export const BATCH_QUEUES = ['rows-checked-queue', 'rows-bisect-queue'] as const;
const TABLES: readonly BatchName[] = ['demo_rows', 'rabbitmq_retry_outbox'];

export interface FlowNode {
  id: string;
  type: string;
  name?: string;
  [key: string]: unknown;
}

/** This run's names: tables as SQL identifiers, queues and exchanges with the prefix (and the test- the cleanup knows). */
export function batchNames(prefix: string): Record<BatchName, string> {
  const names = {} as Record<BatchName, string>;
  for (const n of BATCH_NAMES) names[n] = TABLES.includes(n) ? uniqueName(n).replace(/[^A-Za-z0-9_]/g, '_') : uniqueName(`${prefix}-${n}`);
  return names;
}

/** The broker objects the example declares under these names, deleted by `broker.cleanup()`. */
export function trackBatchExample(broker: Broker, names: Record<BatchName, string>): void {
  for (const q of BATCH_QUEUES) broker.track('queue', names[q], `${names[q]}.retry`, `${names[q]}.parking`);
  broker.track('exchange', names['rows-exchange']);
}

export async function dropBatchTables(db: PostgresDatabase | undefined, names: Record<BatchName, string>): Promise<void> {
  for (const table of TABLES) await db?.query(`DROP TABLE IF EXISTS ${names[table]}`).catch(() => undefined);
}

/**
 * The example's text with this run's names; `keepLabels`: not in the nodes' names and notes, so the
 * canvas reads as the shipped example does.
 */
export function renamedBatchExample(text: string, names: Record<BatchName, string>, keepLabels = false): FlowNode[] {
  const pattern = new RegExp(`\\b(${BATCH_NAMES.join('|')})\\b`, 'g');
  const rename = (value: string): string => value.replace(pattern, (n) => names[n as BatchName]);
  if (!keepLabels) return JSON.parse(rename(text)) as FlowNode[];
  return (JSON.parse(text) as FlowNode[]).map(
    (node) => Object.fromEntries(Object.entries(node).map(([key, value]) => [key, key === 'name' || key === 'info' ? value : (JSON.parse(rename(JSON.stringify(value))) as unknown)])) as FlowNode,
  );
}

/** A fresh Node-RED (default: 4.1, the repository's) with the packed package, its temp directories added to `tempDirs` (to remove). */
export async function packedNodeRed(tempDirs: string[], runtime: NodeRedRuntime = nodeRed4): Promise<{ red: NodeRedProcess; userDir: string }> {
  const packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
  tempDirs.push(packDir);
  const userDir = await userDirWith(await packPackage(packDir));
  tempDirs.push(userDir);
  const red = await NodeRedProcess.start({ launch: await runtime.prepare(), userDir, env: { AMQP_URL, DATABASE_URL, RABBITMQ_MANAGEMENT_URL: MANAGEMENT_URL } });
  return { red, userDir };
}
