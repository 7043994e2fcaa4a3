/**
 * `npm test`'s preflight (scripts/preflight.mjs): which service is missing → which line, what it fixes
 * and when it may, and the summary of skipped tests printed at the end of a run
 * (test/helpers/skip-summary.ts). The checks themselves talk to the services: proven by hand (see
 * docs/development.md, "What the tests need").
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { brokerFinding, canEnable, chromiumFinding, databaseFinding, managementFinding, redisFinding, renamedVariables, report } from '../../scripts/preflight-report.mjs';
import { brokerTarget, serviceUrls, shown } from '../../scripts/services.mjs';
import { skippedGroups, skippedLines } from '../helpers/skip-summary';

const ok = <T extends { state: string }>(findings: T[]): T[] => findings.filter((f) => f.state === 'ok');

describe('preflight of npm test', function () {
  it('reads each service from its one variable, with the defaults the tests use', () => {
    assert.deepEqual(serviceUrls({}), {
      amqp: 'amqp://guest:guest@127.0.0.1:5672',
      management: 'http://127.0.0.1:15672',
      database: 'postgres://postgres@127.0.0.1:5432/test',
      redis: 'redis://127.0.0.1:6379',
      chromium: '/usr/bin/chromium',
    });
    assert.equal(serviceUrls({ AMQP_URL: 'amqp://u:p@rabbit.example:5673' }).management, 'http://rabbit.example:15672', "the management API defaults to the broker's host");
    assert.equal(serviceUrls({ RABBITMQ_MANAGEMENT_URL: 'http://127.0.0.1:15673' }).management, 'http://127.0.0.1:15673');
    assert.equal(serviceUrls({ AMQP_MANAGEMENT_URL: 'http://127.0.0.1:15673' }).management, 'http://127.0.0.1:15672', 'the old name is not read');
  });

  it('stops on the old name AMQP_MANAGEMENT_URL alone, naming the new one', () => {
    const [finding] = renamedVariables({ AMQP_MANAGEMENT_URL: 'http://127.0.0.1:15673' });
    assert.equal(finding?.state, 'missing');
    assert.match(report([finding]).lines[0] ?? '', /AMQP_MANAGEMENT_URL .*rename it RABBITMQ_MANAGEMENT_URL/);
    assert.deepEqual(renamedVariables({ AMQP_MANAGEMENT_URL: 'x', RABBITMQ_MANAGEMENT_URL: 'y' }), []);
    assert.deepEqual(renamedVariables({}), []);
  });

  it("knows this host's default broker node (the one rabbitmq-server and rabbitmq-plugins act on)", () => {
    assert.equal(brokerTarget('amqp://guest:guest@127.0.0.1:5672', {})?.defaultNode, true);
    assert.equal(brokerTarget('amqp://localhost', {})?.defaultNode, true);
    assert.equal(brokerTarget('amqp://127.0.0.1:5673', {})?.defaultNode, false, 'another port: another node');
    assert.equal(brokerTarget('amqp://127.0.0.1:5695', { RABBITMQ_NODE_PORT: '5695' })?.defaultNode, true);
    assert.equal(brokerTarget('amqp://rabbit.example', {})?.defaultNode, false, 'another host');
    assert.deepEqual(brokerTarget('amqp://a%40b:p%3Ass@127.0.0.1', {}), { host: '127.0.0.1', port: 5672, address: '127.0.0.1:5672', user: 'a@b', password: 'p:ss', defaultNode: true });
    assert.equal(brokerTarget('not a url', {}), undefined);
  });

  it('enables the management plugin only on the local default node serving a local API', () => {
    const local = brokerTarget('amqp://127.0.0.1', {});
    assert.equal(canEnable(local, 'http://127.0.0.1:15672'), true);
    assert.equal(canEnable(local, 'http://rabbit.example:15672'), false);
    assert.equal(canEnable(brokerTarget('amqp://rabbit.example', {}), 'http://127.0.0.1:15672'), false);
    assert.equal(canEnable(undefined, 'http://127.0.0.1:15672'), false);
  });

  it('one line per missing service, saying how to provide it, and stops', () => {
    const findings = [
      brokerFinding('amqp://guest:secret@127.0.0.1:5672', { answers: false, problem: 'nothing answers at 127.0.0.1:5672' }),
      databaseFinding('postgres://postgres@127.0.0.1:5432/test', 'refused'),
      redisFinding('redis://127.0.0.1:6379', 'refused'),
    ];
    const { lines, ok: passed } = report(findings);
    assert.equal(passed, false);
    assert.equal(lines.length, 4, lines.join('\n'));
    assert.match(lines[0]!, /^preflight: MISSING RabbitMQ amqp:\/\/guest:\*\*\*@127\.0\.0\.1:5672: nothing answers at 127\.0\.0\.1:5672: .*apt-get install rabbitmq-server.*AMQP_URL/);
    assert.doesNotMatch(lines.join('\n'), /secret/, 'no password printed');
    assert.match(lines[1]!, /MISSING PostgreSQL .*: nothing answers: .*apt-get install postgresql.*DATABASE_URL/);
    assert.match(lines[2]!, /MISSING Redis .*: nothing answers: .*apt-get install redis-server.*REDIS_URL/);
    assert.match(lines[3]!, /npm test stopped before the build: 3 things it needs are missing/);
  });

  it('the management API: fixed when its plugin was enabled, else how to enable it', () => {
    const local = brokerTarget('amqp://127.0.0.1', {});
    const remote = brokerTarget('amqp://rabbit.example', {});
    const url = 'http://127.0.0.1:15672';
    assert.equal(managementFinding(url, 'ok', local).state, 'ok');
    assert.deepEqual(managementFinding(url, 'refused', local, undefined), {
      state: 'fixed',
      service: 'RabbitMQ management API',
      at: url,
      note: 'enabled its plugin (rabbitmq-plugins enable rabbitmq_management)',
    });
    const failed = report([managementFinding(url, 'refused', local, '`rabbitmq-plugins enable rabbitmq_management` failed (permission denied)')]);
    assert.equal(failed.ok, false);
    assert.match(failed.lines[0]!, /MISSING RabbitMQ management API http:\/\/127\.0\.0\.1:15672: nothing answers, and `rabbitmq-plugins enable rabbitmq_management` failed \(permission denied\): enable it with `sudo rabbitmq-plugins enable rabbitmq_management`, or point RABBITMQ_MANAGEMENT_URL/);
    const elsewhere = managementFinding('http://rabbit.example:15672', 'refused', remote);
    assert.equal(elsewhere.state, 'missing', 'not ours to enable');
    assert.match(elsewhere.note ?? '', /^nothing answers: enable it with/);
    assert.match(managementFinding(url, 'the user guest may not log in to it (401)', local).note ?? '', /^the user guest may not log in to it \(401\): /);
  });

  it('the database: created when the server answers without it', () => {
    const url = 'postgres://postgres@127.0.0.1:5432/test';
    assert.equal(databaseFinding(url, 'ok').state, 'ok');
    assert.deepEqual(databaseFinding(url, 'no-database', undefined), { state: 'fixed', service: 'PostgreSQL', at: url, note: 'created the database' });
    const failed = databaseFinding(url, 'no-database', 'permission denied to create database');
    assert.equal(failed.state, 'missing');
    assert.match(failed.note ?? '', /could not be created \(permission denied to create database\): create it with `createdb -h 127\.0\.0\.1 -U postgres test`/);
    assert.match(databaseFinding(url, 'password authentication failed for user "postgres"').note ?? '', /^password authentication failed.*DATABASE_URL/);
  });

  it('chromium: the browser tests are skipped locally (said at the start), required under CI=true', () => {
    const missing = "no chromium at /usr/bin/chromium: install Debian's chromium (`sudo apt-get install chromium`) or set CHROMIUM_PATH";
    assert.equal(chromiumFinding('/usr/bin/chromium', undefined, true).state, 'ok');
    const local = report([chromiumFinding('/usr/bin/chromium', missing, false)]);
    assert.equal(local.ok, true);
    assert.deepEqual(local.lines, [`preflight: will skip the browser tests: ${missing}`]);
    const ci = report([chromiumFinding('/usr/bin/chromium', missing, true)]);
    assert.equal(ci.ok, false);
    assert.match(ci.lines[0]!, /MISSING chromium \/usr\/bin\/chromium: the browser tests must run under CI=true, and there is no chromium at/);
  });

  it('what answers fits in one line; each fix its own line', () => {
    const findings = [
      brokerFinding('amqp://127.0.0.1', { answers: true }),
      managementFinding('http://127.0.0.1:15672', 'refused', brokerTarget('amqp://127.0.0.1', {}), undefined),
      databaseFinding('postgres://postgres@127.0.0.1:5432/test', 'ok'),
      redisFinding('redis://127.0.0.1:6379', 'ok'),
      chromiumFinding('/usr/bin/chromium', undefined, false),
    ];
    assert.equal(ok(findings).length, 4);
    const { lines, ok: passed } = report(findings);
    assert.equal(passed, true);
    assert.deepEqual(lines, [
      'preflight: ready: RabbitMQ amqp://127.0.0.1, PostgreSQL postgres://postgres@127.0.0.1:5432/test, Redis redis://127.0.0.1:6379, chromium /usr/bin/chromium',
      'preflight: fixed: RabbitMQ management API http://127.0.0.1:15672: enabled its plugin (rabbitmq-plugins enable rabbitmq_management)',
    ]);
  });

  it('prints URLs without their password', () => {
    assert.equal(shown('amqp://u:pw@h:5672/v'), 'amqp://u:***@h:5672/v');
    assert.equal(shown('redis://:pw@127.0.0.1:6379'), 'redis://:***@127.0.0.1:6379');
    assert.equal(shown('postgres://postgres@127.0.0.1:5432/test'), 'postgres://postgres@127.0.0.1:5432/test');
  });
});

describe('the summary of skipped tests at the end of a run', function () {
  type FakeTest = { title: string; parent?: FakeSuite; skipReason?: string; pending?: boolean; state?: string; isPending(): boolean };
  type FakeSuite = { title: string; root?: boolean; parent?: FakeSuite; skipReason?: string; pending?: boolean; tests: FakeTest[]; suites: FakeSuite[] };

  function suite(title: string, parent?: FakeSuite): FakeSuite {
    const s: FakeSuite = { title, tests: [], suites: [], root: parent === undefined };
    if (parent) {
      s.parent = parent;
      parent.suites.push(s);
    }
    return s;
  }
  function test(parent: FakeSuite, title: string, state?: string): FakeTest {
    const t: FakeTest = {
      title,
      parent,
      isPending() {
        for (let node: FakeSuite | FakeTest | undefined = t; node; node = node.parent) if (node.pending) return true;
        return false;
      },
    };
    if (state) t.state = state;
    parent.tests.push(t);
    return t;
  }

  it('groups skipped tests by reason, naming the suites skipped for it', () => {
    const root = suite('');
    const editor = suite('editor in a real browser', root);
    editor.pending = true;
    editor.skipReason = 'no chromium at /usr/bin/chromium';
    for (const title of ['palette', 'dialogs', 'parking']) test(editor, title);
    const exportSuite = suite('Export definitions', root);
    exportSuite.pending = true;
    exportSuite.skipReason = 'no chromium at /usr/bin/chromium';
    test(suite('nested', exportSuite), 'download');
    const stores = suite('dedupe stores', root);
    test(stores, 'postgres', 'passed');
    const redis = test(stores, 'a Redis that stops');
    redis.pending = true;
    redis.skipReason = 'needs redis-server';
    const plain = suite('other file', root);
    const inner = suite('inner', plain);
    test(inner, 'skipped without a word').pending = true;
    test(inner, 'failed', 'failed');

    const groups = skippedGroups(root);
    assert.deepEqual(groups, [
      { reason: 'no chromium at /usr/bin/chromium', groups: [{ title: 'editor in a real browser', tests: 3 }, { title: 'Export definitions', tests: 1 }] },
      { reason: 'needs redis-server', groups: [{ title: 'a Redis that stops', tests: 1 }] },
      { reason: 'no reason given', groups: [{ title: 'other file', tests: 1 }] },
    ]);
    assert.deepEqual(skippedLines(groups), [
      '  skipped: editor in a real browser (3 tests), Export definitions (1 test): no chromium at /usr/bin/chromium',
      '  skipped: a Redis that stops (1 test): needs redis-server',
      '  skipped: other file (1 test): no reason given',
    ]);
  });

  it('says nothing when nothing was skipped', () => {
    const root = suite('');
    test(suite('a', root), 'passes', 'passed');
    assert.deepEqual(skippedLines(skippedGroups(root as never)), []);
  });
});

describe('every skip in the suite says why', function () {
  it('no test or hook skips without a reason (skipBecause, not a bare this.skip())', function () {
    const root = path.resolve(__dirname, '..');
    const files = (function walk(dir: string): string[] {
      return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
    })(root);
    // Code only: comments may name the bare call (the helpers' docs); this file names it as its pattern.
    const code = (file: string): string => readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
    const bare = files.filter((file) => file !== __filename && /\bthis\.skip\(\)/.test(code(file)));
    assert.deepEqual(bare.map((file) => path.relative(root, file)), []);
  });
});
