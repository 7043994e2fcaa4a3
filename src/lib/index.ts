/** The package's RabbitMQ logic, usable without Node-RED. */
export * from './consume/consumer-session';
