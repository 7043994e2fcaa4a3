/**
 * postgres — one PostgreSQL database as the package uses it: settings and how to name it without
 * secrets, a pool that says whether the database answers, transactions, LISTEN, what an error means,
 * table names, and checking a table's columns and indexes.
 */
export { PostgresDatabase, type DatabaseEvents, type DatabaseState, type Queryable, type QueryResult, type Statement, type TransactionOptions } from './database';
export { postgresErrorText, postgresProblem, type PostgresProblem } from './errors';
export { derivedName, parseTableName, quoteIdent, type TableName } from './identifiers';
export { checkTable, declareOrCheckTable, samePredicate, type ExpectedColumn, type ExpectedIndex } from './schema-check';
export { describeDatabase, parseConnectionString, poolConfig, type PostgresSettings } from './settings';
