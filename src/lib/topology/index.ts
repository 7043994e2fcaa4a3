/**
 * topology — the retry topology as plain data (what a configuration means, whether it is valid), and
 * applying it to a broker: declared with its arguments, or checked passively (with the management
 * API's definitions when given, or tried at the broker's host when its variable is unset); a one-off probe for the editor; the plan as a RabbitMQ definitions
 * document for operators who create the topology themselves.
 */
export { ALTERNATE_EXCHANGE, DEAD_LETTER_EXCHANGE, DEAD_LETTER_ROUTING_KEY, MESSAGE_TTL, SINGLE_ACTIVE_CONSUMER, isQuorum, sameArgumentValue, type QueueArguments } from './arguments';
export {
  EXCHANGE_TYPES,
  MOVER_HORIZON_MS,
  MOVER_TTL_SLACK_MS,
  movedByPackage,
  planTopology,
  retryRoute,
  unroutedRoute,
  validateTopologyConfig,
  type ExchangeType,
  type PlannedBinding,
  type PlannedExchange,
  type PlannedQueue,
  type RetryRoute,
  type RetryTopologyConfig,
  type TopologyMode,
  type TopologyPlan,
} from './plan';
export { formatDelay, JITTER_STEPS, jitteredDelays, retryDelayFor, retryQueueChoice, retryQueueDelays, retryQueueFor, retryQueueNames, retryQueueOf, tierFor } from './retry-queues';
export {
  DELAYED_RETRY_CHOICES,
  DELAYED_RETRY_FAILED,
  DELAYED_RETRY_MAX,
  DELAYED_RETRY_MIN,
  DELAYED_RETRY_TYPE,
  DELIVERY_LIMIT,
  brokerRetryArguments,
  brokerRetryBounds,
  brokerRetryDelay,
  type DelayedRetry,
} from './broker-retry';
export { retryWaitMs, shortWaitWarning, type RetryWaitConfig } from './retry-wait';
export { definitionsFileName, topologyDefinitions, type DefinitionsBinding, type DefinitionsExchange, type DefinitionsQueue, type RabbitDefinitions } from './definitions';
export { argumentValueText, describeDifference, describeDifferences, diffArguments, describePreconditionFailure, parsePreconditionFailure, type ArgumentDifference, type PreconditionFailure } from './diff';
export { parseDelays, parseQueueArguments, queueNamesOf } from './parse';
export {
  AMQP_CODE,
  FIRST_DIFFERENCE_ONLY,
  TopologyError,
  applyTopology,
  brokerFindings,
  adoptTopology,
  checkTopology,
  declareTopology,
  ensureQueueExists,
  inspectTopology,
  type ChannelRunner,
  type DefinitionReader,
  type ObjectCheck,
  type TopologyInspection,
  type TopologyResult,
} from './apply';
export { brokerRetryVersionProblem, deadLetterFrame, parseBrokerVersion, requestOfPlan, runsBrokerRetry, versionAtLeast, versionFindings, type BrokerRequest, type BrokerVersion, type DeadLetterFrame, type VersionFindings } from './broker-version';
export { ManagementApi, managementEndpoint, type ManagementApiOptions, type ManagementEndpoint } from './management-api';
export { chooseManagementApi, defaultManagementUrl, type ManagementChoice } from './management-url';
export {
  CONSISTENT_HASH_EXCHANGE,
  MAX_PARTITIONS,
  PARTITION_ROUTINGS,
  busiestShare,
  fnv1a32,
  isPartitioned,
  partitionExchangeName,
  partitionKeyText,
  partitionOf,
  partitionQueueName,
  partitionQueueNames,
  partitionTarget,
  partitionTopology,
  type PartitionRouting,
  type PartitionRoutingChoice,
} from './partitions';
export { resolvePartitionRouting, type ExchangeTypeReader } from './partition-routing';
export { probeTopology, type ProbeOptions } from './probe';
export { QUEUE_TYPES, applyQueueType, classicOnCluster, classicQueuesOf, findClassicOnCluster, queueTypeOf, type ClassicOnCluster, type ClusterReader, type QueueTypeChoice } from './queue-type';
