/** Pure parts of the stores: the memory store's bounds, batches, Redis URLs, PostgreSQL settings, errors and table names. */
import assert from 'node:assert/strict';
import { describeDatabase, parseConnectionString, parseTableName, poolConfig, postgresProblem } from '../../../src/lib/postgres';

describe('PostgreSQL settings', () => {
  it('names the database without the password', () => {
    assert.equal(describeDatabase({ connectionString: 'postgres://app:secret@db:5433/orders' }), 'app@db:5433/orders');
    assert.equal(describeDatabase({ host: 'db', user: 'app', database: 'orders' }), 'app@db:5432/orders');
  });
  it('puts a separately given user and password into the connection string (pg lets the string win)', () => {
    const config = poolConfig({ connectionString: 'postgres://db:5432/orders?sslmode=require', user: 'app', password: 'p@ss/word' });
    const url = new URL(config.connectionString!);
    assert.equal(decodeURIComponent(url.username), 'app');
    assert.equal(decodeURIComponent(url.password), 'p@ss/word');
    assert.equal(url.searchParams.get('sslmode'), 'require');
  });
  it('refuses what is not a postgres URL', () => {
    assert.deepEqual(parseConnectionString('mysql://x/y'), { problem: 'database URL must start with postgres:// or postgresql://, not mysql://' });
    assert.ok('problem' in parseConnectionString('::'));
  });
  it('tells an unreachable database, a refused login and a missing table apart', () => {
    assert.equal(postgresProblem({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' }), 'unreachable');
    assert.equal(postgresProblem({ code: '28P01', message: 'password authentication failed' }), 'auth');
    assert.equal(postgresProblem({ code: '42P01', message: 'relation "x" does not exist' }), 'schema');
    assert.equal(postgresProblem({ code: '23505', message: 'duplicate key' }), 'other');
    assert.equal(postgresProblem(new Error('Connection terminated unexpectedly')), 'unreachable');
  });
  it('takes table names of plain identifiers only, quoted for SQL and plain for people', () => {
    assert.deepEqual(parseTableName('app.outbox'), { schema: 'app', table: 'outbox', sql: '"app"."outbox"', display: 'app.outbox' });
    assert.deepEqual(parseTableName('outbox'), { schema: undefined, table: 'outbox', sql: '"outbox"', display: 'outbox' });
    assert.ok('problem' in parseTableName('outbox; DROP TABLE x'));
    assert.ok('problem' in parseTableName('a.b.c'));
  });
});
