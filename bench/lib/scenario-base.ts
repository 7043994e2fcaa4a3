/** What every bench scenario builds on: the run context, the flow nodes of a bench topology, timing a run. */
import { performance } from 'node:perf_hooks';
import type { ChannelModel } from 'amqplib';
import { Broker } from '../../test/helpers/broker';
import { brokerNode, configNode, consumerNode, tab, type Names } from '../../test/helpers/flows';
import { brokerCpuUs, type Body, type RunResult } from './common';
import { loadFlow, unloadFlow, type FlowNode } from './nodered';

export interface Ctx {
  url: string;
  model: ChannelModel;
  body1k: Body;
}

/** Generous: a run that does not finish is a broken run, never a slow one. */
export const timeoutFor = (count: number): number => Math.max(60_000, count * 5);

// Flow nodes: test/helpers/flows.ts's builders, with the bench's topology (default exchange, 200 ms TTL).

export const benchBroker = (ctx: Pick<Ctx, 'url'>): FlowNode => brokerNode({ name: 'bench broker', url: ctx.url, reconnectMax: '30', managementUrl: '' });
export const benchConfig = (topo: Names, extra: Record<string, unknown> = {}): FlowNode => configNode(topo, { retryDelay: '200', ...extra });
export const benchConsumer = (wires: string[][], prefetch: number, extra: Record<string, unknown> = {}): FlowNode => consumerNode(wires, { prefetch: String(prefetch), ...extra });

export function settleNode(id: string, action: string, wires: string[][] = []): FlowNode {
  return { id, type: 'retry-settle', z: 'flow', action, reason: 'bench', wires };
}

/** Waits until a queue exists and has a consumer (test/helpers/broker.ts's wait, on the bench's connection). */
export async function waitForConsumer(queue: string): Promise<void> {
  const broker = await Broker.open();
  try {
    await broker.waitForConsumer(queue);
  } finally {
    await broker.cleanup();
  }
}

/** Lets the package declare its own topology (a consumer in a flow), so raw and package use the same queues. */
export async function declareTopology(ctx: Ctx, topo: Names): Promise<void> {
  await loadFlow([tab(), benchBroker(ctx), benchConfig(topo), benchConsumer([[]], 1)]);
  try {
    await waitForConsumer(topo.mainQueue);
  } finally {
    await unloadFlow();
  }
}


/** Times `run` (which handles `count` messages): wall time, this process's CPU and the broker's. */
export async function timed(count: number, run: () => Promise<unknown>): Promise<RunResult> {
  const broker0 = brokerCpuUs();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const broker = brokerCpuUs() - broker0;
  const us = cpu.user + cpu.system;
  return {
    seconds,
    msgPerSec: count / seconds,
    cpuUsPerMsg: us / count,
    cpuPercent: (us / 1e6 / seconds) * 100,
    brokerUsPerMsg: broker / count,
    brokerCpuPercent: (broker / 1e6 / seconds) * 100,
  };
}
