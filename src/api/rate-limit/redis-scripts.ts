/**
 * The Lua scripts of `RedisRateLimiter`. Each runs atomically in Redis and reads the clock with
 * `TIME`, so every process agrees on "now" whatever its own clock says.
 *
 * Keys (per budget key): KEYS[1] the log (ZSET of admission times; a GCRA timestamp string for the
 * token bucket), KEYS[2] the pause-until time (ms), KEYS[3] the policy told by the server (HASH q, w;
 * `counted` = 1 once a response carried `RateLimit: r`, `probe` = until when the slow start's one
 * request is waited for), KEYS[4] (acquire only) the first waiter of each process with the time it
 * was told to come back (ZSET).
 * Shared ARGV head: [1] default quota, [2] default window (s), [3] margin floor (ms), [4] margin
 * ratio of the window.
 */

/** Lua prelude: `now` (ms, Redis clock), the policy in force and whether the server told it. */
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local stored = redis.call('HMGET', KEYS[3], 'q', 'w')
local q, w, known = tonumber(stored[1]), tonumber(stored[2]), 1
if not q or not w then q, w, known = tonumber(ARGV[1]), tonumber(ARGV[2]), 0 end
local span = math.ceil(w * 1000) + math.max(tonumber(ARGV[3]), math.ceil(w * 1000 * tonumber(ARGV[4])))
`;

/**
 * Lua: a paused key waits; in slow start (no `RateLimit: r` seen yet for the key) a request waits
 * while another one's answer is awaited (returns known = 0, so the caller polls).
 */
const PAUSE_AND_SLOW_START = `
local pause = tonumber(redis.call('GET', KEYS[2]) or '0')
if pause > now then return {pause - now, known} end
local counted = tonumber(ARGV[7]) == 0 or redis.call('HGET', KEYS[3], 'counted') == '1'
if not counted then
  local probe = tonumber(redis.call('HGET', KEYS[3], 'probe') or '0')
  if probe > now then return {probe - now, 0} end
end
`;

/** Lua, on admission in slow start: this request is the one whose answer the others wait for. */
const PROBE_SENT = `
if not counted then
  redis.call('HSET', KEYS[3], 'probe', now + tonumber(ARGV[7]))
  if redis.call('PTTL', KEYS[3]) < 0 then redis.call('PEXPIRE', KEYS[3], 86400000) end
end
`;

/**
 * Sliding log acquire. ARGV[5] the log member of this request (unique), ARGV[6] lookback kept (ms),
 * ARGV[7] slow-start probe time (ms; 0: no slow start), ARGV[8] the calling process's id (its first
 * waiter).
 * Returns {0, known} when admitted (the entry is added), else {ms to wait, known}.
 *
 * When the log is full, the caller (the first waiter of its process) is given the edge after the
 * ones already given to the other processes' first waiters still waiting: one process wakes per
 * freed slot instead of every process on the same one. The edges are only hints: the caller checks
 * again when it wakes, so a process that died waiting (dropped 1 s after its edge) costs a slot's
 * wait, never safety.
 */
export const SLIDING_LOG_ACQUIRE = `${PRELUDE}${PAUSE_AND_SLOW_START}
local keep = span + tonumber(ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - keep)
local n = redis.call('ZCOUNT', KEYS[1], '(' .. (now - span), '+inf')
if n < q then
  redis.call('ZADD', KEYS[1], now, ARGV[5])
  redis.call('PEXPIRE', KEYS[1], keep)
  redis.call('ZREM', KEYS[4], ARGV[8])
  ${PROBE_SENT}
  return {0, known}
end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - 1000)
redis.call('ZREM', KEYS[4], ARGV[8])
local ahead = redis.call('ZCARD', KEYS[4])
local edge
if n - q + ahead < n then
  edge = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - span), '+inf', 'WITHSCORES', 'LIMIT', n - q + ahead, 1)
else
  edge = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
end
local wakeAt = math.max(now + 1, tonumber(edge[2]) + span)
redis.call('ZADD', KEYS[4], wakeAt, ARGV[8])
redis.call('PEXPIRE', KEYS[4], keep)
return {wakeAt - now, known}
`;

/**
 * Token bucket (GCRA) acquire, kept to measure against the sliding log: burst C = ARGV[5], rate
 * (q - C) / (w + margin), so that C + rate * (w + margin) <= q. Returns like SLIDING_LOG_ACQUIRE.
 */
export const TOKEN_BUCKET_ACQUIRE = `${PRELUDE}${PAUSE_AND_SLOW_START}
local burst = math.min(tonumber(ARGV[5]), q)
local interval = span / math.max(1, q - burst)
if burst >= q then interval = span end
local tolerance = (burst - 1) * interval
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
if tat - tolerance <= now then
  local nextTat = tat + interval
  redis.call('SET', KEYS[1], tostring(nextTat), 'PX', math.ceil(nextTat - now) + 1000)
  ${PROBE_SENT}
  return {0, known}
end
return {math.max(1, math.ceil(tat - tolerance - now)), known}
`;

/**
 * Observe. ARGV[5] policy quota or '' , ARGV[6] policy window (s) or '', ARGV[7] pause (ms) or '',
 * ARGV[8] remaining r or '', ARGV[9] reset t (s), ARGV[10] lookback (ms), ARGV[11] lookback kept (ms),
 * ARGV[12] member suffix, ARGV[13] '1' for the sliding log (restamp, follow r), ARGV[14] the log
 * member of the caller's oldest unanswered request, restamped to now, or ''.
 * Any answer ends the slow start's wait; one carrying r (not a 429) ends the slow start.
 * Returns {phantoms added, pause set (ms) or 0, 1 if an entry was restamped else 0}.
 */
export const OBSERVE = `${PRELUDE}
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[3], 'q', ARGV[5], 'w', ARGV[6])
  redis.call('PEXPIRE', KEYS[3], 86400000)
  q, w, known = tonumber(ARGV[5]), tonumber(ARGV[6]), 1
  span = math.ceil(w * 1000) + math.max(tonumber(ARGV[3]), math.ceil(w * 1000 * tonumber(ARGV[4])))
end
redis.call('HDEL', KEYS[3], 'probe')
local restamped = 0
if ARGV[13] == '1' and ARGV[14] ~= '' then
  local at = redis.call('ZSCORE', KEYS[1], ARGV[14])
  if at and tonumber(at) < now then
    redis.call('ZADD', KEYS[1], 'XX', now, ARGV[14])
    restamped = 1
  end
end
local paused = 0
local function pauseFor(ms)
  ms = math.ceil(ms)
  local untilMs = now + ms
  if untilMs > tonumber(redis.call('GET', KEYS[2]) or '0') then
    redis.call('SET', KEYS[2], tostring(untilMs), 'PX', ms)
  end
  paused = math.max(paused, ms)
end
if ARGV[7] ~= '' then pauseFor(tonumber(ARGV[7])) end
local foreign = 0
if ARGV[8] ~= '' and known == 1 then redis.call('HSET', KEYS[3], 'counted', '1') end
if ARGV[8] ~= '' and ARGV[13] == '1' and known == 1 then
  local r = tonumber(ARGV[8])
  local ours = redis.call('ZCOUNT', KEYS[1], '(' .. (now - span - tonumber(ARGV[10])), '+inf')
  foreign = q - r - ours
  if foreign > 0 then
    for i = 1, foreign do
      redis.call('ZADD', KEYS[1], now, 'other:' .. now .. ':' .. ARGV[12] .. ':' .. i)
    end
    redis.call('PEXPIRE', KEYS[1], span + tonumber(ARGV[11]))
    if r == 0 and tonumber(ARGV[9]) > 0 then pauseFor(tonumber(ARGV[9]) * 1000) end
  else
    foreign = 0
  end
end
return {foreign, paused, restamped}
`;
