/**
 * Resolving a partitioned configuration's `auto` routing on the broker: the partition exchange that
 * exists keeps its type (a running system never switches routing, which would move keys between
 * partitions); else the consistent-hash exchange when the broker offers it (management API's
 * `exchange_types`), else the computed routing key. Without a management API: computed. An API that
 * does not answer is an error (the caller asks again later): guessing could route keys to other partitions.
 */
import { CONSISTENT_HASH_EXCHANGE, partitionExchangeName, type PartitionRouting, type PartitionRoutingChoice } from './partitions';

/** What the routing needs to know of the broker (ManagementApi offers it). */
export interface ExchangeTypeReader {
  exchangeType(name: string): Promise<string | undefined>;
  exchangeTypes(): Promise<string[]>;
}

export async function resolvePartitionRouting(choice: PartitionRoutingChoice | undefined, mainQueue: string, broker: ExchangeTypeReader | undefined): Promise<PartitionRouting> {
  if (choice === 'consistent-hash' || choice === 'computed') return choice;
  if (!broker) return 'computed';
  const existing = await broker.exchangeType(partitionExchangeName(mainQueue));
  if (existing !== undefined) return existing === CONSISTENT_HASH_EXCHANGE ? 'consistent-hash' : 'computed';
  return (await broker.exchangeTypes()).includes(CONSISTENT_HASH_EXCHANGE) ? 'consistent-hash' : 'computed';
}
