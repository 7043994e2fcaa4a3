/**
 * The converter command's arguments: what each option means, and the mistakes said as they are (a
 * UsageError: no stack). Pure.
 */

/** A mistake in how the command was called: said as it is, without a stack. */
export class UsageError extends Error {}

export const USAGE = `usage: node-red-contrib-rabbitmq-retry migrate <flows.json | project directory> [-o converted.json | --in-place] [--dry-run] [--credentials flows_cred.json | --no-credentials] [--settle-at-end]`;

export const HELP = `${USAGE}

Converts flows of @meowwolf/node-red-contrib-amqp, @frankvdb/node-red-contrib-amqp,
node-red-contrib-amqp and node-red-contrib-amqp-ack to node-red-contrib-rabbitmq-retry's nodes.
The report goes to stderr.

  -o <file>              write the flows to <file> and the credentials to <file>_cred.json
                         (without -o: the flows to stdout, refused when they have credentials)
  --in-place             replace the input flows file and its credentials file, keeping backups
  --dry-run              only the report: what would change; nothing is written
  --credentials <file>   the credentials file (default: flows_cred.json beside the flows)
  --no-credentials       leave the credentials out (enter them in each retry-broker)
  --settle-at-end        consumers that acked on arrival ack at the flow's end and retry a throw
  -h, --help             this text

An encrypted credentials file needs NODE_RED_CREDENTIAL_SECRET. Then, with Node-RED stopped, put
the output in place of flows.json and flows_cred.json (or set flowFile in settings.js to it).`;

export interface Args {
  input: string;
  output?: string;
  inPlace: boolean;
  dryRun: boolean;
  credentials?: string | false;
  settleAtEnd: boolean;
  help: boolean;
}

/** The value of an option that takes one (`-o file`). */
function valueOf(rest: string[], i: number, option: string): string {
  const value = rest[i];
  if (value === undefined || value.startsWith('-')) throw new UsageError(`${option} needs a file name\n${USAGE}`);
  return value;
}

export function parseArgs(argv: string[]): Args {
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h') return { input: '', inPlace: false, dryRun: false, settleAtEnd: false, help: true };
  if (command !== 'migrate') throw new UsageError(USAGE);
  const args: Args = { input: '', inPlace: false, dryRun: false, settleAtEnd: false, help: false };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? '';
    if (arg === '-h' || arg === '--help') args.help = true;
    else if (arg === '-o' || arg === '--output') args.output = valueOf(rest, ++i, arg);
    else if (arg === '--credentials') args.credentials = valueOf(rest, ++i, arg);
    else if (arg === '--no-credentials') args.credentials = false;
    else if (arg === '--in-place') args.inPlace = true;
    else if (arg === '--dry-run') args.dryRun = true;
    else if (arg === '--settle-at-end') args.settleAtEnd = true;
    else if (!arg.startsWith('-') && args.input === '') args.input = arg;
    else throw new UsageError(`unknown argument ${arg}\n${USAGE}`);
  }
  if (args.help) return args;
  if (args.input === '') throw new UsageError(USAGE);
  if (args.inPlace && args.output !== undefined) throw new UsageError(`--in-place writes over the input: give it without -o\n${USAGE}`);
  return args;
}
