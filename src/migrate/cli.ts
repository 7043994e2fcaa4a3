#!/usr/bin/env node
/**
 * The converter's command: `npx node-red-contrib-rabbitmq-retry migrate flows.json -o converted.json`.
 * Reads a flows file (or a Node-RED project's directory), writes the converted flows to -o (or
 * stdout, or over the input with --in-place, keeping backups), the report to stderr; --dry-run
 * writes nothing. Credentials never go to stdout nor the report: they go into a credentials file
 * next to -o (`<name>_cred.json`, encrypted as the input was).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { HELP, parseArgs, UsageError, type Args } from './cli-args';
import { flowFiles, readJson, targetsOf, writeWithBackup, type Targets } from './cli-files';
import { convertFlows, reportText } from './convert';
import { CredentialFileError, credentialsFile, isEncrypted, readCredentials, SECRET_VARIABLE } from './credential-file';
import type { ConvertResult, FlowCredentials, FlowNode } from './types';

interface Converted {
  result: ConvertResult;
  /** The credentials file read, if any. */
  credFile?: string;
  /** The secret an encrypted credentials file was read with: the output is encrypted with it again. */
  secret?: string;
}

function convert(args: Args, files: ReturnType<typeof flowFiles>, env: NodeJS.ProcessEnv): Converted {
  const flows = readJson(files.flows) as FlowNode[];
  const credFile = args.credentials === false ? undefined : (args.credentials ?? (existsSync(files.credentials) ? files.credentials : undefined));
  const raw = credFile === undefined ? undefined : readJson(credFile);
  const secret = raw !== undefined && isEncrypted(raw) ? env[SECRET_VARIABLE] : undefined;
  const credentials: FlowCredentials | undefined = raw === undefined || credFile === undefined ? undefined : readCredentials(raw, secret, credFile);
  const result = convertFlows(flows, {
    ...(credentials ? { credentials } : {}),
    autoAck: args.settleAtEnd ? 'settle-at-end' : 'ack-on-arrival',
    ...(args.credentials === false ? { credentialsLeftOut: true } : {}),
  });
  return { result, ...(credFile ? { credFile } : {}), ...(secret ? { secret } : {}) };
}

/** How the written files get into Node-RED. */
function nextStep(flows: string, credentials: string | undefined): string {
  const files = credentials ? `${flows} and ${credentials} in place of flows.json and flows_cred.json` : `${flows} in place of flows.json`;
  return `next: stop Node-RED, put ${files} (or set flowFile: '${path.basename(flows)}' in settings.js), start it`;
}

/** Writes the flows and their credentials where the targets say; returns what it did, for the report. */
function write(c: Converted, targets: Targets, out: (text: string) => void): string[] {
  const json = `${JSON.stringify(c.result.flows, null, 4)}\n`;
  const count = Object.keys(c.result.credentials).length;
  if (targets.flows === undefined) {
    out(json);
    return [];
  }
  const written = [targets.flows];
  const backups = [writeWithBackup(targets.flows, json, targets.inPlace)];
  if (count > 0 && targets.credentials) {
    backups.push(writeWithBackup(targets.credentials, `${JSON.stringify(credentialsFile(c.result.credentials, c.secret), null, 4)}\n`, targets.inPlace, 0o600));
    written.push(`${targets.credentials} (credentials of ${count} node(s)${c.secret ? ', encrypted with the same secret' : ''})`);
  }
  const kept = backups.filter((b): b is string => b !== undefined);
  const lines = [`written: ${written.join(', ')}`];
  if (kept.length > 0) lines.push(`backups of the input: ${kept.join(', ')}`);
  lines.push(targets.inPlace ? 'next: start Node-RED (it must have been stopped: a running one writes its own flows over these at its next deploy)' : nextStep(targets.flows, count > 0 ? targets.credentials : undefined));
  return lines;
}

export function main(argv: string[], env: NodeJS.ProcessEnv, out: (text: string) => void, err: (text: string) => void): number {
  try {
    const args = parseArgs(argv);
    if (args.help) {
      out(`${HELP}\n`);
      return 0;
    }
    const files = flowFiles(args.input);
    const converted = convert(args, files, env);
    const targets = targetsOf(args, files, converted.credFile);
    if (args.dryRun) {
      err(reportText(converted.result));
      err('dry run: nothing written');
      return 0;
    }
    if (Object.keys(converted.result.credentials).length > 0 && targets.flows === undefined) {
      throw new UsageError(`the flows have credentials, which never go to stdout: write with -o instead of '>': migrate ${args.input} -o converted.json (credentials into converted_cred.json)`);
    }
    const done = write(converted, targets, out);
    err(reportText(converted.result));
    for (const line of done) err(line);
    return 0;
  } catch (e) {
    err(e instanceof CredentialFileError || e instanceof UsageError ? e.message : `migrate: ${(e as Error).message}`);
    return 2;
  }
}

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2), process.env, (t) => process.stdout.write(t), (t) => process.stderr.write(`${t}\n`));
}
