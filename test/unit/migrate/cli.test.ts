/**
 * Issue 41: the converter's command (src/migrate/cli.ts): flows on stdout, the report on stderr,
 * credentials only into a _cred.json next to -o (encrypted as the input was), never a password on
 * stdout or in the report; an encrypted credentials file without its secret is refused.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
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
    assert.match(refused.stderr, /write with -o instead of '>': migrate .*flows.json -o converted.json/);
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

  it('says how to use it; --help answers on stdout and exits 0', function () {
    assert.match(run([]).stderr, /usage: node-red-contrib-rabbitmq-retry migrate/);
    assert.equal(main(['convert'], {}, () => undefined, () => undefined), 2);
    for (const args of [['--help'], ['-h'], ['migrate', '--help']]) {
      let stdout = '';
      assert.equal(main(args, {}, (t) => (stdout += t), () => undefined), 0, args.join(' '));
      assert.match(stdout, /usage: node-red-contrib-rabbitmq-retry migrate[\s\S]*--in-place[\s\S]*--dry-run/);
    }
  });

  describe('never over the input unless asked (issue 52)', function () {
    const cred = { b: { username: 'shop', password: PASSWORD } };
    beforeEach(() => writeFileSync(path.join(dir, 'flows_cred.json'), JSON.stringify(cred)));
    const input = (): string => readFileSync(path.join(dir, 'flows.json'), 'utf8');

    it('refuses -o onto the input flows file or its credentials file, and leaves both as they were', function () {
      const before = [input(), readFileSync(path.join(dir, 'flows_cred.json'), 'utf8')];
      for (const target of ['flows.json', 'flows_cred.json', 'flows']) {
        const r = run([path.join(dir, 'flows.json'), '-o', path.join(dir, target)]);
        assert.equal(r.code, 2, target);
        assert.match(r.stderr, /would write over the input .*--in-place/);
      }
      assert.deepEqual([input(), readFileSync(path.join(dir, 'flows_cred.json'), 'utf8')], before);
    });

    it('--in-place replaces both, keeping a backup of each, named in its report (never over an older backup)', function () {
      const before = [input(), readFileSync(path.join(dir, 'flows_cred.json'), 'utf8')];
      const r = run([path.join(dir, 'flows.json'), '--in-place']);
      assert.equal(r.code, 0, r.stderr);
      const backups = ['flows.json.before-migrate', 'flows_cred.json.before-migrate'].map((f) => path.join(dir, f));
      assert.deepEqual(backups.map((f) => readFileSync(f, 'utf8')), before);
      assert.ok(backups.every((f) => r.stderr.includes(f)), r.stderr);
      assert.ok((JSON.parse(input()) as Array<{ type: string }>).some((n) => n.type === 'retry-consumer'));
      assert.deepEqual(JSON.parse(readFileSync(path.join(dir, 'flows_cred.json'), 'utf8')), { b: { user: 'shop', password: PASSWORD } });
      assert.equal(run([path.join(dir, 'flows.json'), '--in-place']).code, 0);
      assert.deepEqual(readFileSync(backups[0] ?? '', 'utf8'), before[0], 'the first backup stays');
      assert.ok(existsSync(path.join(dir, 'flows.json.before-migrate-2')));
    });

    it('--dry-run writes nothing and reports what would change, credentials or not', function () {
      const before = input();
      const r = run([path.join(dir, 'flows.json'), '--dry-run']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /converted to retry-consumer[\s\S]*dry run: nothing written/);
      assert.equal(input(), before);
      assert.deepEqual(readdirSync(dir).sort(), ['flows.json', 'flows_cred.json']);
    });

    it('says plainly what is missing: the input, the folder of -o', function () {
      const missing = run([path.join(dir, 'nope.json')]);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /nope\.json: no such file or directory/);
      const folder = run([path.join(dir, 'flows.json'), '-o', path.join(dir, 'out', 'converted.json')]);
      assert.equal(folder.code, 2);
      assert.match(folder.stderr, /the folder .*out does not exist: create it/);
      assert.doesNotMatch(missing.stderr + folder.stderr, /ENOENT/);
    });

    it('--no-credentials says they were left out, not that there were none', function () {
      const r = run([path.join(dir, 'flows.json'), '--no-credentials']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /credentials left out \(--no-credentials\): enter the user and password/);
      assert.doesNotMatch(r.stderr, /no credentials in the input/);
    });
  });
});
