/** The package's RabbitMQ logic, usable without Node-RED. */
export * from './amqp-values';
export * from './attempts';
export * from './backoff';
export * from './broker-connection';
export * from './confirm-publisher';
export * from './connection-settings';
export * from './consumer-session';
export * from './delivery-registry';
export * from './management-api';
export * from './parked';
export * from './parked-view';
export * from './parking';
export * from './payload';
export * from './topology';
export * from './topology-broker';
export * from './replay';
