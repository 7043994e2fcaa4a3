/**
 * The Redis store's Lua scripts (claim, release, and a turn's completes, releases and claims in one
 * call) and how their replies are read. Pure.
 */
import { CLAIMED, DONE, type ClaimResult } from './store';

/**
 * One key's claim: 'c' claimed, 'd' done, 'h' held (`mine` is this owner's value, `lease` ms); a held
 * key's `<ttl>:<owner>` goes to `held`. The answer of a batch is one string, a letter per key, not an
 * array of replies: one bulk reply for the client to read instead of one per key (with held keys, an
 * array: the letters, then each held key's details in order).
 */
const CLAIM_ONE = `
local function claim(k, mine, lease, held)
  local v = redis.call('GET', k)
  if not v then
    redis.call('SET', k, mine, 'PX', lease)
    return 'c'
  elseif v == 'd' then
    return 'd'
  elseif v == mine then
    redis.call('PEXPIRE', k, lease)
    return 'c'
  end
  held[#held + 1] = redis.call('PTTL', k) .. ':' .. string.sub(v, 3)
  return 'h'
end
local function answer(letters, held)
  if #held == 0 then return table.concat(letters) end
  table.insert(held, 1, table.concat(letters))
  return held
end`;

export const CLAIM = `${CLAIM_ONE}
local out, held = {}, {}
local mine = 'c:' .. ARGV[1]
for i, k in ipairs(KEYS) do out[i] = claim(k, mine, ARGV[2], held) end
return answer(out, held)`;

/** One key's release: deleted only while it is still this owner's claim (`mine`). */
const RELEASE_ONE = `
local function release(k, mine)
  if redis.call('GET', k) == mine then redis.call('DEL', k) end
end`;

export const RELEASE = `${RELEASE_ONE}
local mine = 'c:' .. ARGV[1]
for _, k in ipairs(KEYS) do release(k, mine) end
return 0`;

/**
 * Completes, releases and claims in one call (KEYS: the completes, the releases, the claims; ARGV:
 * how many completes, how many releases, owner, lease ms, retention ms), in that order.
 */
export const EXCHANGE = `${CLAIM_ONE}${RELEASE_ONE}
local done, gone = tonumber(ARGV[1]), tonumber(ARGV[2])
local mine = 'c:' .. ARGV[3]
local out, held = {}, {}
for i, k in ipairs(KEYS) do
  if i <= done then
    redis.call('SET', k, 'd', 'PX', ARGV[5])
  elseif i <= done + gone then
    release(k, mine)
  else
    out[#out + 1] = claim(k, mine, ARGV[4], held)
  end
end
return answer(out, held)`;

export interface Scripts {
  dedupeExchange(...args: Array<string | number>): Promise<ClaimReply>;
  dedupeClaim(...args: Array<string | number>): Promise<ClaimReply>;
  dedupeRelease(...args: Array<string | number>): Promise<number>;
}

/** A claim script's reply: a letter per distinct key; with held keys, an array of the letters and each held key's `<ttl>:<owner>`. */
export type ClaimReply = string | string[];

/** A claim script's answers, one per distinct key, for each key asked (`at`: see distinctNames). */
export function answers(reply: ClaimReply, at: readonly number[] | undefined): ClaimResult[] {
  const letters = typeof reply === 'string' ? reply : (reply[0] ?? '');
  const results = new Array<ClaimResult>(letters.length);
  let held = 1;
  for (let i = 0; i < letters.length; i += 1) {
    const letter = letters.charCodeAt(i);
    results[i] = letter === 99 /* c */ ? CLAIMED : letter === 100 /* d */ ? DONE : heldResult((reply as string[])[held++] ?? '');
  }
  return at === undefined ? results : at.map((i) => results[i] as ClaimResult);
}

/** A held key's details, `<ttl>:<owner>`. */
function heldResult(detail: string): ClaimResult {
  const colon = detail.indexOf(':');
  return { state: 'held', owner: detail.slice(colon + 1), until: Date.now() + Math.max(0, Number(detail.slice(0, colon))) };
}
