/**
 * Issue 52: the converter's command as a user runs it from the docs. The README's commands, run as
 * written by the built command (dist/, found by npx in the folder's node_modules/.bin as an installed
 * package's bin is), in a folder holding flows.json and flows_cred.json as Node-RED leaves them; and
 * the command the report gives for an exchange the old flow declared creates it on the real broker.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { convertFlows, reportText, type FlowNode } from '../../src/migrate';
import { managementEndpoint } from '../../src/lib/topology';
import { AMQP_URL, MANAGEMENT_URL, managementFetch, uniqueName, vhostPath } from '../helpers/broker';

const ROOT = path.resolve(__dirname, '../..');
const BIN = 'node-red-contrib-rabbitmq-retry';
const PASSWORD = 'Tr0ub4dor&3-readme';

/** The commands of the README that run the converter: lines of its sh blocks, or inline code. */
function readmeCommands(): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const blocks = (readme.match(/```sh\n[\s\S]*?```/g) ?? []).flatMap((b) => b.split('\n'));
  const inline = [...readme.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? '');
  return [...blocks, ...inline].filter((line) => line.startsWith(`npx ${BIN} migrate`));
}

const flows: FlowNode[] = [
  { id: 'tab', type: 'tab', label: 'orders' },
  { id: 'mq', type: 'amqp-broker', name: 'rabbit', host: 'mq.example', port: 5672, vhost: '', tls: false, credsFromSettings: false },
  { id: 'in', type: 'amqp-in', z: 'tab', x: 100, y: 100, name: 'orders', broker: 'mq', prefetch: 1, noAck: true, exchangeName: '', exchangeType: 'direct', exchangeRoutingKey: '', queueName: 'orders', queueExclusive: false, queueDurable: true, queueAutoDelete: false, headers: '{}', wires: [[]] },
];

describe('the migrate command as the README shows it (built, next to flows_cred.json)', function () {
  let dir: string;
  before(function () {
    if (!existsSync(path.join(ROOT, 'dist/migrate/cli.js'))) throw new Error('dist/migrate/cli.js missing: npm run build first');
  });
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'migrate-readme-'));
    writeFileSync(path.join(dir, 'flows.json'), JSON.stringify(flows, null, 4));
    writeFileSync(path.join(dir, 'flows_cred.json'), JSON.stringify({ mq: { username: 'shop', password: PASSWORD } }, null, 4));
    // As `npm install` leaves a package's bin: npx finds it in the folder's node_modules/.bin, offline.
    mkdirSync(path.join(dir, 'node_modules/.bin'), { recursive: true });
    const bin = path.join(dir, 'node_modules/.bin', BIN);
    writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${path.join(ROOT, 'dist/migrate/cli.js')}" "$@"\n`);
    chmodSync(bin, 0o755);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('each command runs as written and exits 0; the last leaves converted.json and converted_cred.json', function () {
    const commands = readmeCommands();
    assert.ok(commands.length > 0, 'the README shows the command');
    for (const command of commands) {
      const r = spawnSync('sh', ['-c', command], { cwd: dir, encoding: 'utf8', env: { ...process.env, npm_config_offline: 'true', npm_config_yes: 'false' } });
      assert.equal(r.status, 0, `${command}\n${r.stderr}`);
      assert.ok(!`${r.stdout}${r.stderr}`.includes(PASSWORD), 'no password printed');
    }
    const converted = JSON.parse(readFileSync(path.join(dir, 'converted.json'), 'utf8')) as FlowNode[];
    assert.equal(converted.find((n) => n.id === 'mq')?.type, 'retry-broker');
    assert.equal(converted.find((n) => n.id === 'in')?.type, 'retry-consumer');
    assert.deepEqual(JSON.parse(readFileSync(path.join(dir, 'converted_cred.json'), 'utf8')), { mq: { user: 'shop', password: PASSWORD } });
    assert.deepEqual(readdirSync(dir).sort(), ['converted.json', 'converted_cred.json', 'flows.json', 'flows_cred.json', 'node_modules'], 'the input untouched, nothing else written');
  });

  it('refuses -o flows.json (the input) unless --in-place, which keeps backups', function () {
    const run = (args: string[]): number | null => spawnSync(path.join(dir, 'node_modules/.bin', BIN), args, { cwd: dir, encoding: 'utf8' }).status;
    assert.equal(run(['migrate', 'flows.json', '-o', 'flows.json']), 2);
    assert.equal(JSON.parse(readFileSync(path.join(dir, 'flows.json'), 'utf8'))[1].type, 'amqp-broker');
    assert.equal(run(['migrate', 'flows.json', '--in-place']), 0);
    assert.deepEqual(readdirSync(dir).filter((f) => f.includes('before-migrate')).sort(), ['flows.json.before-migrate', 'flows_cred.json.before-migrate']);
  });
});

describe('the report\'s command for an exchange the old flow declared (real broker)', function () {
  const exchange = uniqueName('migrate-exchange');
  after(() => managementFetch(`exchanges/${vhostPath()}/${encodeURIComponent(exchange)}`, { method: 'DELETE' }));

  it('creates it durable, of the old type, where check mode expects it', async function () {
    const url = new URL(AMQP_URL);
    const vhost = decodeURIComponent(url.pathname.slice(1)) || '/';
    const broker: FlowNode = { id: 'mq', type: 'amqp-broker', host: url.hostname, port: Number(url.port || 5672), vhost, tls: false };
    const consumer: FlowNode = { ...(flows[2] as FlowNode), exchangeName: exchange, exchangeType: 'topic', exchangeDurable: false, exchangeRoutingKey: 'order.*' };
    const line = reportText(convertFlows([broker, consumer])).split('\n').find((l) => l.includes(`exchange '${exchange}'`)) ?? '';
    assert.match(line, /^create +exchange .*\(topic, was not durable\) .*: curl /);
    assert.equal((await managementFetch(`exchanges/${vhostPath()}/${encodeURIComponent(exchange)}`)).status, 404, 'not there before');
    const endpoint = managementEndpoint(MANAGEMENT_URL, decodeURIComponent(url.username) || 'guest', decodeURIComponent(url.password) || 'guest');
    const userPassword = Buffer.from(endpoint.authorization.replace(/^Basic /, ''), 'base64').toString('utf8');
    const command = (line.split(': curl ')[1] ?? '').replace('USER:PASSWORD', userPassword).replace(`http://${url.hostname}:15672`, endpoint.baseUrl);
    execFileSync('sh', ['-c', `curl -fsS ${command}`]);
    const found = (await (await managementFetch(`exchanges/${vhostPath()}/${encodeURIComponent(exchange)}`)).json()) as { type: string; durable: boolean };
    assert.deepEqual([found.type, found.durable], ['topic', true]);
  });
});
