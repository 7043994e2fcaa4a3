/**
 * Resolving a partitioned configuration's `auto` routing on the broker: the partition exchange that
 * exists keeps its type (a running system never switches routing, which would move keys between
 * partitions); else the computed routing key, which spreads keys more evenly than the consistent-hash
 * exchange (issue 53: 60 keys `key-0`… on 8 partitions, busiest / mean 1.20 computed, 1.33–2.00 on the
 * consistent-hash exchange whatever the binding weight: docs/scaling.md). Without a management API:
 * computed. An API that does not answer is an error (the caller asks again later): guessing could route
 * keys to other partitions.
 */
import { CONSISTENT_HASH_EXCHANGE, partitionExchangeName, type PartitionRouting, type PartitionRoutingChoice } from './partitions';

/** What the routing needs to know of the broker (ManagementApi offers it). */
export interface ExchangeTypeReader {
  exchangeType(name: string): Promise<string | undefined>;
}

export async function resolvePartitionRouting(choice: PartitionRoutingChoice | undefined, mainQueue: string, broker: ExchangeTypeReader | undefined): Promise<PartitionRouting> {
  if (choice === 'consistent-hash' || choice === 'computed') return choice;
  if (!broker) return 'computed';
  const existing = await broker.exchangeType(partitionExchangeName(mainQueue));
  return existing === CONSISTENT_HASH_EXCHANGE ? 'consistent-hash' : 'computed';
}
