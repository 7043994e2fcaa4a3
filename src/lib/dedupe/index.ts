/** dedupe — the idempotent consumer's store of processed message keys: claim with a lease, complete, release. */
export { DedupeStoreError, type ClaimResult, type DedupeKey, type DedupeStore, type DedupeStoreProblem } from './store';
