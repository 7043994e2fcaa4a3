/**
 * Issue 41: the converter's command (src/migrate/cli.ts): flows on stdout, the report on stderr,
 * credentials only into a _cred.json next to -o (encrypted as the input was), never a password on
 * stdout or in the report; an encrypted credentials file without its secret is refused.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../../src/migrate/cli';
import { credentialsFile, readCredentials } from '../../../src/migrate/credential-file';

const PASSWORD = 'Tr0ub4dor&3-secret';
const flows = [
  { id: 't', type: 'tab', label: 'orders' },
  { id: 'b', type: 'amqp-broker', name: '', host: 'mq', port: 5672, vhost: '', tls: false, credsFromSettings: false },
  { id: 'in', type: 'amqp-in', z: 't', x: 100, y: 100, broker: 'b', prefetch: 1, noAck: true, exchangeName: '', exchangeType: 'direct', exchangeRoutingKey: '', queueName: 'orders', queueExclusive: false, queueDurable: true, queueAutoDelete: false, headers: '{}', wires: [[]] },
];

function run(args: string[], env: NodeJS.ProcessEnv = {}): { code: number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const code = main(['migrate', ...args], env, (t) => (stdout += t), (t) => (stderr += `${t}\n`));
  return { code, stdout, stderr };
}

describe('the migrate command', function () {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'migrate-'));
    writeFileSync(path.join(dir, 'flows.json'), JSON.stringify(flows));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the converted flows to stdout and the report to stderr', function () {
    const r = run([path.join(dir, 'flows.json')]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Array<{ id: string; type: string }>;
    assert.deepEqual(out.filter((n) => n.id === 'in' || n.id === 'b').map((n) => n.type), ['retry-broker', 'retry-consumer']);
    assert.match(r.stderr, /converted to retry-consumer \+ retry-config amqp-in/);
  });

  it('moves the credentials of an unencrypted flows_cred.json into converted_cred.json next to -o, never to stdout or the report', function () {
    writeFileSync(path.join(dir, 'flows_cred.json'), JSON.stringify({ b: { username: 'shop', password: PASSWORD } }));
    const refused = run([path.join(dir, 'flows.json')]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /give -o/);
    assert.equal(refused.stdout, '');
    const out = path.join(dir, 'converted.json');
    const r = run([path.join(dir, 'flows.json'), '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.ok(!r.stderr.includes(PASSWORD));
    assert.ok(!readFileSync(out, 'utf8').includes(PASSWORD));
    assert.deepEqual(JSON.parse(readFileSync(path.join(dir, 'converted_cred.json'), 'utf8')), { b: { user: 'shop', password: PASSWORD } });
  });

  it('keeps a password an export carried on a node out of stdout', function () {
    writeFileSync(path.join(dir, 'flows.json'), JSON.stringify(flows.map((n) => (n.id === 'b' ? { ...n, credentials: { username: 'shop', password: PASSWORD } } : n))));
    const r = run([path.join(dir, 'flows.json')]);
    assert.equal(r.code, 2);
    assert.ok(!r.stdout.includes(PASSWORD) && !r.stderr.includes(PASSWORD));
  });

  it('refuses an encrypted credentials file without its secret, clearly; converts it with NODE_RED_CREDENTIAL_SECRET, encrypted again', function () {
    writeFileSync(path.join(dir, 'flows_cred.json'), JSON.stringify(credentialsFile({ b: { username: 'shop', password: PASSWORD } }, 'the-secret')));
    const out = path.join(dir, 'converted.json');
    const refused = run([path.join(dir, 'flows.json'), '-o', out]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /encrypted with Node-RED's credential secret: set NODE_RED_CREDENTIAL_SECRET/);
    assert.ok(!existsSync(out));
    const wrong = run([path.join(dir, 'flows.json'), '-o', out], { NODE_RED_CREDENTIAL_SECRET: 'not-it' });
    assert.equal(wrong.code, 2);
    const r = run([path.join(dir, 'flows.json'), '-o', out], { NODE_RED_CREDENTIAL_SECRET: 'the-secret' });
    assert.equal(r.code, 0, r.stderr);
    const written = JSON.parse(readFileSync(path.join(dir, 'converted_cred.json'), 'utf8')) as unknown;
    assert.ok(!JSON.stringify(written).includes(PASSWORD), 'encrypted');
    assert.deepEqual(readCredentials(written, 'the-secret', 'converted_cred.json'), { b: { user: 'shop', password: PASSWORD } });
    const without = run([path.join(dir, 'flows.json'), '--no-credentials']);
    assert.equal(without.code, 0, 'converts without them when asked');
  });

  it('reads a Node-RED project: its package.json names the flow file', function () {
    const project = path.join(dir, 'project');
    mkdirSync(project);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'p', 'node-red': { settings: { flowFile: 'orders.json' } } }));
    writeFileSync(path.join(project, 'orders.json'), JSON.stringify(flows));
    const r = run([project]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok((JSON.parse(r.stdout) as Array<{ type: string }>).some((n) => n.type === 'retry-consumer'));
  });

  it('says how to use it', function () {
    assert.match(run([]).stderr, /usage: node-red-contrib-rabbitmq-retry migrate/);
    assert.equal(main(['convert'], {}, () => undefined, () => undefined), 2);
  });
});
