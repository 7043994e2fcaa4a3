/**
 * migrate — converts flows of the other Node-RED AMQP packages (@meowwolf/node-red-contrib-amqp,
 * @frankvdb/node-red-contrib-amqp, node-red-contrib-amqp, node-red-contrib-amqp-ack) to this
 * package's nodes: one mapper per package on a shared core. Pure: the command and the editor run it.
 */
export { convertFlows, mappersFor, reportText } from './convert';
export type { ConvertOptions, ConvertResult, FlowCredentials, FlowNode, ReportEntry } from './types';
