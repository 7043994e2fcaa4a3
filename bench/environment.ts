/** The report's header: the machine, the broker, the software measured and the runtime. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AMQP_URL } from './lib/common';
import { RUNTIME_DESCRIPTION, versions } from './lib/nodered';
import { MB } from './config';

export interface Environment {
  machine: string;
  broker: string;
  /** e.g. "RabbitMQ 3.10.8". */
  brokerProduct: string;
  /** The broker's OS process when it runs on this machine (its CPU is measured). */
  brokerPid: number | undefined;
  versions: string;
  runtime: string;
}

export function environment(serverProperties: Record<string, unknown> | undefined, brokerPid: number | undefined): Environment {
  let cpuModel = 'unknown';
  try {
    cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpuModel;
  } catch {
    cpuModel = os.cpus()[0]?.model ?? cpuModel;
  }
  let rev = 'unknown';
  try {
    rev = execFileSync('git', ['describe', '--always', '--dirty'], { cwd: path.join(__dirname, '..'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // Not a git checkout.
  }
  const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { name: string; version: string };
  const u = new URL(AMQP_URL);
  const brokerProduct = `${(serverProperties?.product as string | undefined) ?? 'broker'} ${(serverProperties?.version as string | undefined) ?? '?'}`;
  return {
    machine: `${os.availableParallelism()} CPUs (${cpuModel}), ${Math.round(os.totalmem() / MB / 1024)} GiB RAM, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`,
    brokerProduct,
    brokerPid,
    broker: `${brokerProduct} at ${u.hostname}:${u.port || 5672}${brokerPid ? ` (os pid ${brokerPid}: its CPU is measured too)` : ' (its CPU is not measured: not local, or no management API)'}`,
    versions: `Node ${process.version}, Node-RED ${versions.nodeRed}, amqplib ${versions.amqplib}, ${pkg.name} ${pkg.version} (${rev})`,
    runtime: RUNTIME_DESCRIPTION,
  };
}
