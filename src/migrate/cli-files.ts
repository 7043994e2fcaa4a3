/**
 * The converter command's files: the input's flows and credentials files (a project's package.json
 * names them), where the result goes (-o, stdout or --in-place), and never over the input unless
 * asked: --in-place keeps a backup of each file it replaces. Node.js only.
 */
import { copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { UsageError, type Args } from './cli-args';

export interface InputFiles {
  flows: string;
  /** Node-RED's credentials file beside the flows (it may not exist). */
  credentials: string;
}

/** Node-RED's name for a flows file's credentials: flows.json → flows_cred.json. */
export const credentialsNameOf = (flows: string): string => flows.replace(/(\.json)?$/, '_cred.json');

function exists(file: string): void {
  if (!existsSync(file)) throw new UsageError(`${file}: no such file or directory`);
}

/** A project's flow file and credentials file (its package.json names them), or the file given. */
export function flowFiles(input: string): InputFiles {
  exists(input);
  if (!statSync(input).isDirectory()) return { flows: input, credentials: credentialsNameOf(input) };
  exists(path.join(input, 'package.json'));
  const pkg = readJson(path.join(input, 'package.json')) as { 'node-red'?: { settings?: { flowFile?: string; credentialsFile?: string } } };
  const settings = pkg['node-red']?.settings ?? {};
  const flows = path.join(input, settings.flowFile ?? 'flow.json');
  return { flows, credentials: settings.credentialsFile ? path.join(input, settings.credentialsFile) : credentialsNameOf(flows) };
}

export function readJson(file: string): unknown {
  exists(file);
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`${file}: ${(err as Error).message}`);
  }
}

/** Where the result goes: stdout (no file), a file and its credentials file, with the backups --in-place keeps. */
export interface Targets {
  flows?: string;
  credentials?: string;
  inPlace: boolean;
}

const same = (a: string, b: string | undefined): boolean => b !== undefined && path.resolve(a) === path.resolve(b);

/** The files to write; refuses to write over the input (flows or credentials) unless --in-place, and into a missing folder. */
export function targetsOf(args: Args, input: InputFiles, credentialsRead: string | undefined): Targets {
  if (args.inPlace) return { flows: input.flows, credentials: credentialsRead ?? input.credentials, inPlace: true };
  if (args.output === undefined) return { inPlace: false };
  const flows = args.output;
  const credentials = credentialsNameOf(flows);
  const folder = path.dirname(path.resolve(flows));
  if (!existsSync(folder)) throw new UsageError(`-o ${flows}: the folder ${folder} does not exist: create it, or write elsewhere`);
  for (const file of [flows, credentials]) {
    if (same(file, input.flows) || same(file, input.credentials) || same(file, credentialsRead)) {
      throw new UsageError(`-o ${flows} would write over the input ${file}: add --in-place to replace it (a backup is kept), or give -o another file`);
    }
  }
  return { flows, credentials, inPlace: false };
}

/** A backup's name beside the file, never one that exists. */
export function backupName(file: string, taken: (name: string) => boolean = existsSync): string {
  let name = `${file}.before-migrate`;
  for (let i = 2; taken(name); i++) name = `${file}.before-migrate-${i}`;
  return name;
}

/** Writes a file; over an existing one with --in-place, after copying it to its backup. Returns the backup's name. */
export function writeWithBackup(file: string, content: string, inPlace: boolean, mode?: number): string | undefined {
  const backup = inPlace && existsSync(file) ? backupName(file) : undefined;
  if (backup) copyFileSync(file, backup);
  writeFileSync(file, content, mode === undefined ? undefined : { mode });
  return backup;
}
