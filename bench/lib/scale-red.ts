/**
 * The scale section's Node-RED processes with scale-probe.cjs preloaded (ProbedRed) and what it
 * reads of them and of the broker: CPU and RSS from /proc, queues consuming, an idle window.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Channel, ChannelModel } from 'amqplib';
import { waitFor } from '../../test/helpers/broker';
import { tab, type Names } from '../../test/helpers/flows';
import { NodeRedProcess, PACKAGE, type NodeRedLaunch } from '../../test/helpers/node-red-process';
import { brokerCpuUs, sleep } from './common';
import { distRoot, positioned, type FlowNode } from './nodered';
import * as S from './scenarios';

const SCALE_PROBE = path.join(__dirname, 'scale-probe.cjs');

export interface Report {
  seq: number;
  at: number;
  rss: number;
  heapUsed: number;
  consumeOk: number;
  lastConsumeOkAt: number;
  deliveries: number;
  firstDeliveryAt: number;
  lastSettleAt: number;
  checkQueue: number;
  channelOpens: number;
  httpRequests: number;
  amqplibCopies: number;
}

export const wallNow = (): number => performance.timeOrigin + performance.now();

/** user + system CPU of a process so far (µs), from /proc/<pid>/stat. */
export function procCpuUs(pid: number, clockTicks = 100): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks;
}
export function procRss(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

/** A user directory with the package linked in (its dist/ is what Node-RED loads). */
function userDirWithPackage(): string {
  const userDir = mkdtempSync(path.join(os.tmpdir(), 'bench-scale-userdir-'));
  mkdirSync(path.join(userDir, 'node_modules'), { recursive: true });
  symlinkSync(path.dirname(distRoot), path.join(userDir, 'node_modules', PACKAGE), 'dir');
  return userDir;
}

export class ProbedRed {
  private constructor(
    readonly red: NodeRedProcess,
    private readonly out: string,
    readonly userDir: string,
  ) {}

  static async start(launch: NodeRedLaunch): Promise<ProbedRed> {
    const userDir = userDirWithPackage();
    const out = path.join(userDir, 'scale-report.json');
    try {
      const red = await NodeRedProcess.start({ launch, userDir, env: { BENCH_SCALE_OUT: out }, nodeArgs: ['--expose-gc', '--require', SCALE_PROBE] });
      return new ProbedRed(red, out, userDir);
    } catch (err) {
      rmSync(userDir, { recursive: true, force: true });
      throw err;
    }
  }

  get pid(): number {
    return this.red.child.pid!;
  }

  private lastSeq = 0;
  /** The probe's counters (`gc`: after a full GC, for memory); `reset`: start them again from zero afterwards. */
  async report({ gc = false, reset = false }: { gc?: boolean; reset?: boolean } = {}): Promise<Report> {
    if (reset) writeFileSync(`${this.out}.reset`, '');
    if (gc) writeFileSync(`${this.out}.gc`, '');
    this.red.child.kill('SIGWINCH');
    let found: Report | undefined;
    await waitFor(
      () => {
        if (this.red.exited) throw new Error(`Node-RED exited${this.red.log()}`);
        try {
          const r = JSON.parse(readFileSync(this.out, 'utf8')) as Report;
          if (r.seq > this.lastSeq) found = r;
        } catch {
          // Not written yet.
        }
        return found !== undefined;
      },
      'the scale probe report',
      15_000,
    );
    this.lastSeq = found!.seq;
    return found!;
  }

  async deploy(flow: FlowNode[]): Promise<void> {
    try {
      await this.red.deploy(positioned(flow));
    } catch (err) {
      // fetch reusing a keep-alive socket Node-RED's server has just closed: "fetch failed", nothing deployed.
      if (!(err instanceof TypeError) || this.red.exited) throw err;
      await this.red.deploy(positioned(flow));
    }
  }

  async stop(): Promise<void> {
    await this.red.stop();
    rmSync(this.userDir, { recursive: true, force: true });
  }
}

export async function deleteQueues(model: ChannelModel, queues: string[]): Promise<void> {
  const ch = await model.createChannel();
  ch.on('error', () => undefined);
  try {
    for (const q of queues) await ch.deleteQueue(q);
  } finally {
    await ch.close().catch(() => undefined);
  }
}

/** Waits until every queue has a consumer; returns when that was first seen (wall clock ms). */
export async function allConsuming(model: ChannelModel, queues: string[], red: ProbedRed, timeoutMs: number): Promise<number> {
  let ch: Channel | undefined;
  try {
    let waiting = queues;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const still: string[] = [];
      for (const [i, q] of waiting.entries()) {
        try {
          if (!ch) {
            ch = await model.createChannel();
            ch.on('error', () => undefined);
          }
          if ((await ch.checkQueue(q)).consumerCount === 0) still.push(q);
        } catch {
          // Not declared yet (a 404 closes the channel): this one and the rest wait for the next round.
          ch = undefined;
          still.push(...waiting.slice(i));
          break;
        }
      }
      const at = wallNow();
      waiting = still;
      if (waiting.length === 0) return at;
      if (red.red.exited) throw new Error(`Node-RED exited${red.red.log()}`);
      if (Date.now() > deadline) throw new Error(`${waiting.length} of ${queues.length} queues have no consumer after ${timeoutMs / 1000} s (${waiting[0]})${red.red.log()}`);
      await sleep(50);
    }
  } finally {
    await ch?.close().catch(() => undefined);
  }
}

/** CPU % of a process and of the broker over `windowS` seconds of nothing to do. */
export async function idleWindow(pid: number, windowS: number): Promise<{ cpuPct: number; brokerPct: number; seconds: number }> {
  const cpu0 = procCpuUs(pid);
  const broker0 = brokerCpuUs();
  const t0 = performance.now();
  await sleep(windowS * 1000);
  const seconds = (performance.now() - t0) / 1000;
  return { cpuPct: (procCpuUs(pid) - cpu0) / 1e4 / seconds, brokerPct: (brokerCpuUs() - broker0) / 1e4 / seconds, seconds };
}

export const brokerFlowNode = (url: string, managementUrl = ''): FlowNode => ({ ...S.benchBroker({ url }), managementUrl });

export const oneConsumerFlow = (url: string, topo: Names, prefetch: number): FlowNode[] => [tab(), brokerFlowNode(url), S.benchConfig(topo), S.benchConsumer([['ack']], prefetch), S.settleNode('ack', 'ack')];
