#!/usr/bin/env node
/**
 * The converter's command: `npx node-red-contrib-rabbitmq-retry migrate flows.json > converted.json`.
 * Reads a flows file (or a Node-RED project's directory), writes the converted flows to stdout (or
 * -o), the report to stderr. Credentials never go to stdout nor the report: they go into a
 * credentials file next to -o (`<name>_cred.json`, encrypted as the input was).
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { convertFlows, reportText } from './convert';
import { CredentialFileError, credentialsFile, isEncrypted, readCredentials, SECRET_VARIABLE } from './credential-file';
import type { FlowCredentials, FlowNode } from './types';

/** A mistake in how the command was called: said as it is, without a stack. */
class UsageError extends Error {}

const USAGE = `usage: node-red-contrib-rabbitmq-retry migrate <flows.json | project directory> [-o converted.json] [--credentials flows_cred.json | --no-credentials] [--settle-at-end]`;

interface Args {
  input: string;
  output?: string;
  credentials?: string | false;
  settleAtEnd: boolean;
}

function parseArgs(argv: string[]): Args {
  const [command, ...rest] = argv;
  if (command !== 'migrate') throw new UsageError(USAGE);
  const args: Args = { input: '', settleAtEnd: false };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? '';
    if (arg === '-o' || arg === '--output') args.output = rest[++i];
    else if (arg === '--credentials') args.credentials = rest[++i];
    else if (arg === '--no-credentials') args.credentials = false;
    else if (arg === '--settle-at-end') args.settleAtEnd = true;
    else if (!arg.startsWith('-') && args.input === '') args.input = arg;
    else throw new UsageError(`unknown argument ${arg}\n${USAGE}`);
  }
  if (args.input === '') throw new UsageError(USAGE);
  return args;
}

/** A project's flow file and credentials file (its package.json names them), or the file given. */
function flowFiles(input: string): { flows: string; credentials: string } {
  if (!statSync(input).isDirectory()) return { flows: input, credentials: input.replace(/(\.json)?$/, '_cred.json') };
  const pkg = JSON.parse(readFileSync(path.join(input, 'package.json'), 'utf8')) as { 'node-red'?: { settings?: { flowFile?: string; credentialsFile?: string } } };
  const settings = pkg['node-red']?.settings ?? {};
  const flows = path.join(input, settings.flowFile ?? 'flow.json');
  return { flows, credentials: settings.credentialsFile ? path.join(input, settings.credentialsFile) : flows.replace(/(\.json)?$/, '_cred.json') };
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`${file}: ${(err as Error).message}`);
  }
}

export function main(argv: string[], env: NodeJS.ProcessEnv, out: (text: string) => void, err: (text: string) => void): number {
  try {
    const args = parseArgs(argv);
    const files = flowFiles(args.input);
    const flows = readJson(files.flows) as FlowNode[];
    const credFile = args.credentials === false ? undefined : (args.credentials ?? (existsSync(files.credentials) ? files.credentials : undefined));
    const raw = credFile === undefined ? undefined : readJson(credFile);
    const secret = raw !== undefined && isEncrypted(raw) ? env[SECRET_VARIABLE] : undefined;
    const credentials: FlowCredentials | undefined = raw === undefined || credFile === undefined ? undefined : readCredentials(raw, secret, credFile);
    const result = convertFlows(flows, { ...(credentials ? { credentials } : {}), autoAck: args.settleAtEnd ? 'settle-at-end' : 'ack-on-arrival' });
    const hasCredentials = Object.keys(result.credentials).length > 0;
    if (hasCredentials && args.output === undefined) {
      throw new UsageError('the flows have credentials: give -o converted.json so they can be written next to it (converted_cred.json), never to stdout');
    }
    const json = `${JSON.stringify(result.flows, null, 4)}\n`;
    if (args.output === undefined) out(json);
    else {
      writeFileSync(args.output, json);
      if (hasCredentials) {
        const target = args.output.replace(/(\.json)?$/, '_cred.json');
        writeFileSync(target, `${JSON.stringify(credentialsFile(result.credentials, secret), null, 4)}\n`, { mode: 0o600 });
        err(`credentials of ${Object.keys(result.credentials).length} node(s) written to ${target}${secret ? ' (encrypted with the same secret)' : ''}`);
      }
    }
    err(reportText(result));
    return 0;
  } catch (e) {
    err(e instanceof CredentialFileError || e instanceof UsageError ? e.message : `migrate: ${(e as Error).message}`);
    return 2;
  }
}

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2), process.env, (t) => process.stdout.write(t), (t) => process.stderr.write(`${t}\n`));
}
