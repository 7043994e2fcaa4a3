/**
 * The relay's pure parts, case by case: the window of batches in flight (room, turn in claim order,
 * idle), what a batch's outcomes make of its rows, the claim statement; and the pipeline itself on a
 * fake database and publisher: the next batch claimed and published while the first one's confirms
 * are outstanding, and the batches' marks committed in the order they were claimed even when the
 * later one is confirmed first.
 */
import assert from 'node:assert/strict';
import { samePredicate } from '../../../src/lib/postgres';

describe('table check: a partial index\'s predicate', () => {
  it('is the one written whatever the parentheses, casts to text and spaces PostgreSQL prints', () => {
    assert.equal(samePredicate("(status = 'pending'::text)", "status = 'pending'"), true);
    assert.equal(samePredicate("status='pending'", "status = 'pending'"), true);
  });

  it('is not another predicate, nor none (a full index on the same columns)', () => {
    assert.equal(samePredicate("(status = 'sent'::text)", "status = 'pending'"), false);
    assert.equal(samePredicate(null, "status = 'pending'"), false);
  });
});
