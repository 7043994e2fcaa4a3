/**
 * connection — one AMQP connection per broker configuration: where and how to connect (settings,
 * cluster targets, TLS), reconnecting with capped backoff, its state in words a user can act on, and
 * the publishers it owns.
 */
export { BrokerConnection, type BrokerConnectionEvents, type BrokerConnectionOptions, type ConnectionPhase, type ConnectionState } from './broker-connection';
export { describeConnectionError } from './errors';
export { ENV_FIELDS, isUnresolvedEnv, redactUrl, resolveConnectTargets, resolveEnvFields, type BrokerSettings, type ConnectTarget } from './settings';
