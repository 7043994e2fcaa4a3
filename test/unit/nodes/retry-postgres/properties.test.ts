import assert from 'node:assert/strict';
import { POSTGRES_NUMBERS, postgresProperties } from '../../../../src/nodes/retry-postgres/properties';

describe('retry-postgres properties', function () {
  it('a node saved without its properties: port and pool size at their fallbacks, no URL, host or TLS', function () {
    assert.deepEqual(postgresProperties({}), { name: '', url: '', host: undefined, database: undefined, numbers: { port: 5432, poolSize: 10 }, tlsConfig: '', tls: false, problems: [] });
  });

  it('reads what it is set to (text trimmed, numbers as text)', function () {
    const read = postgresProperties({ name: 'orders db', url: ' postgres://db/app ', host: ' db ', database: 'app', port: '6432', poolSize: '4', tlsConfig: 't1', tls: true });
    assert.deepEqual(read, { name: 'orders db', url: 'postgres://db/app', host: 'db', database: 'app', numbers: { port: 6432, poolSize: 4 }, tlsConfig: 't1', tls: true, problems: [] });
  });

  it('a bad number is a problem and reads as its fallback; only true asks for TLS', function () {
    const read = postgresProperties({ port: '70000', tls: 'true' });
    assert.equal(read.numbers.port, POSTGRES_NUMBERS.port.fallback);
    assert.equal(read.problems.length, 1);
    assert.match(read.problems[0] ?? '', /port/);
    assert.equal(read.tls, false);
  });
});
