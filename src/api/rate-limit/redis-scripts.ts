/**
 * The Lua scripts of `RedisRateLimiter`. Each runs atomically in Redis and takes "now" from one
 * clock: in production Redis `TIME`, so every process agrees on it whatever its own clock says
 * (ARGV[5] is ''); in tests the limiter's `clock` (`timeSource: 'clock'`, ARGV[5] the time in ms),
 * so a test moves time on and runs a window in milliseconds instead of waiting for it, as BullMQ's
 * scripts take their timestamps as arguments.
 *
 * Keys (per budget key, see redis-keys.ts): KEYS[1] the log (ZSET of admission times), KEYS[2] the
 * pause-until time (ms), KEYS[3] the policy told by the server (HASH q, w; `counted` = 1 once a
 * response carried `RateLimit: r`, `probe` = until when the slow start's one request is waited
 * for); acquire only: KEYS[4] the waiting tickets by virtual finish tag (ZSET), KEYS[5] the same
 * tickets by deadline (ZSET), KEYS[6] the virtual time `V` and each flow's last tag `f:<flow>`
 * (HASH), KEYS[7] the admission times the pacing counts (ZSET).
 * Shared ARGV head: [1] default quota, [2] default window (s), [3] margin floor (ms), [4] margin
 * ratio of the window, [5] now (ms) or '' to read Redis `TIME`.
 */

/**
 * Lua prelude: `now` (ms: ARGV[5], else the Redis clock), the policy in force and whether the
 * server told it. Exported with the two pieces below for the token bucket of bench/limiter.ts.
 */
export const PRELUDE = `
local now = tonumber(ARGV[5])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local stored = redis.call('HMGET', KEYS[3], 'q', 'w')
local q, w, known = tonumber(stored[1]), tonumber(stored[2]), 1
if not q or not w then q, w, known = tonumber(ARGV[1]), tonumber(ARGV[2]), 0 end
local span = math.ceil(w * 1000) + math.max(tonumber(ARGV[3]), math.ceil(w * 1000 * tonumber(ARGV[4])))
`;

/**
 * Lua: a paused key waits; in slow start (no `RateLimit: r` seen yet for the key) a request waits
 * while another one's answer is awaited (known = 0, so the caller polls). ARGV[8] the slow start's
 * wait for an answer (ms; 0: no slow start). The script defines `waitFor(ms, known)`, which builds
 * its "wait" answer.
 */
export const PAUSE_AND_SLOW_START = `
local pause = tonumber(redis.call('GET', KEYS[2]) or '0')
if pause > now then return waitFor(pause - now, known) end
local counted = tonumber(ARGV[8]) == 0 or redis.call('HGET', KEYS[3], 'counted') == '1'
if not counted then
  local probe = tonumber(redis.call('HGET', KEYS[3], 'probe') or '0')
  if probe > now then return waitFor(probe - now, 0) end
end
`;

/** Lua, on admission in slow start: this request is the one whose answer the others wait for. */
export const PROBE_SENT = `
if not counted then
  redis.call('HSET', KEYS[3], 'probe', now + tonumber(ARGV[8]))
  if redis.call('PTTL', KEYS[3]) < 0 then redis.call('PEXPIRE', KEYS[3], 86400000) end
end
`;

/**
 * Sliding log acquire with weighted fair queuing between flows. ARGV[6] the caller's ticket
 * (`<flow>|<process>:<seq>`, one per request; also its log member once admitted), ARGV[7] lookback
 * kept (ms), ARGV[8] slow-start probe time (ms; 0: no slow start), ARGV[9] the flow id, ARGV[10] its
 * weight, ARGV[11] the ticket's tag from an earlier check ('' the first time), ARGV[12] how long
 * (ms) after its edge a ticket lapses when nobody checks it, ARGV[13] how much later (ms) than its
 * edge a live waiter is expected to have checked, ARGV[14] the pacing slices P (0 or 1: none; KEYS[7]
 * the admission times it counts).
 * Returns {0, known, ''} when admitted (the entry is added), else {ms to wait, known, tag}.
 *
 * The ticket waits in KEYS[4] under its virtual finish tag: max(V, last[flow]) + 1/weight, issued on
 * its first check (V and every last tag start again from 0 when nobody waits). It may take a slot
 * only when its rank among the waiting tickets is below the free slots, so tickets are admitted in
 * tag order whichever process checks first; a refused ticket is told the edge of the slot for its
 * rank (beyond the log's entries, a slot its predecessors will take and free one span later).
 * Each answer moves the ticket's deadline to its wake time + ARGV[12]: a ticket of a killed process
 * lapses then, with every other ticket of that process (a live process that was only late puts its
 * tickets back, with their tags, on their next check). When slots are free but held for tickets
 * ahead whose edge passed (their process is late, or dead), the caller checks again when the first
 * of those lapses.
 */
export const SLIDING_LOG_ACQUIRE = `${PRELUDE}
local ticket, grace = ARGV[6], tonumber(ARGV[12])
local keep = span + tonumber(ARGV[7])
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now)
if #lapsed > 0 then
  -- A ticket nobody checked: its process is gone, and so are its other tickets.
  local gone = {}
  for _, member in ipairs(lapsed) do gone[string.match(member, '|([^|]+):%d+$') or member] = true end
  for _, member in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
    if gone[string.match(member, '|([^|]+):%d+$') or member] then
      redis.call('ZREM', KEYS[4], member)
      redis.call('ZREM', KEYS[5], member)
    end
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
end
local tag = tonumber(redis.call('ZSCORE', KEYS[4], ticket) or ARGV[11])
if not tag then
  if redis.call('ZCARD', KEYS[4]) == 0 then redis.call('DEL', KEYS[6]) end
  local tags = redis.call('HMGET', KEYS[6], 'V', 'f:' .. ARGV[9])
  tag = math.max(tonumber(tags[1] or '0'), tonumber(tags[2] or '0')) + 1 / tonumber(ARGV[10])
  redis.call('HSET', KEYS[6], 'f:' .. ARGV[9], tag)
end
redis.call('ZADD', KEYS[4], tag, ticket)
local function waitFor(ms, k)
  local ttl = ms + grace + keep
  redis.call('ZADD', KEYS[5], now + ms + grace, ticket)
  for i = 4, 6 do
    if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
  end
  return {ms, k, string.format('%.17g', tag)}
end
${PAUSE_AND_SLOW_START}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - keep)
local n = redis.call('ZCOUNT', KEYS[1], '(' .. (now - span), '+inf')
local rank = redis.call('ZRANK', KEYS[4], ticket)
-- Pacing (PACE_SLICES): within two spans of the last wait for a full log, at most ceil(q / P) in
-- any span / P (P at most q), counted on KEYS[7], the admission times: an answer's restamp moves a
-- log entry later, and pacing on the log would lose that delay once a slice instead of once a span.
local slices = math.min(tonumber(ARGV[14]) or 0, q)
local paced, slice, burst, m = false, 0, 0, 0
if slices > 1 then
  redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', now - span)
  if tonumber(redis.call('HGET', KEYS[3], 'saturated') or '0') > now then
    paced = true
    slice = math.ceil(span / slices)
    burst = math.ceil(q / slices)
    m = redis.call('ZCOUNT', KEYS[7], '(' .. (now - slice), '+inf')
  end
end
if rank < q - n and (not paced or rank < burst - m) then
  redis.call('ZADD', KEYS[1], now, ticket)
  redis.call('PEXPIRE', KEYS[1], keep)
  if slices > 1 then
    redis.call('ZADD', KEYS[7], now, ticket)
    redis.call('PEXPIRE', KEYS[7], keep)
  end
  redis.call('ZREM', KEYS[4], ticket)
  redis.call('ZREM', KEYS[5], ticket)
  if redis.call('ZCARD', KEYS[4]) == 0 then
    redis.call('DEL', KEYS[6]) -- nobody waits: the next request starts a new busy period anyway
  elseif tag > tonumber(redis.call('HGET', KEYS[6], 'V') or '0') then
    redis.call('HSET', KEYS[6], 'V', tag)
  end
  ${PROBE_SENT}
  return {0, known, ''}
end
-- Saturated: this ticket waits for a full log. Kept two spans: the slots used in a burst free one
-- span later, all at once, and that is when the pace must hold.
if slices > 1 and n >= q then
  redis.call('HSET', KEYS[3], 'saturated', now + 2 * span)
  if redis.call('PTTL', KEYS[3]) < 0 then redis.call('PEXPIRE', KEYS[3], 86400000) end
end
-- The slot of rank r frees when the (n - q + r)-th entry in the span leaves it; past the log's
-- entries, it is a slot the ticket q ranks ahead will take, freed one span after.
local k, cycles = n - q + rank, 0
if q > 0 then
  while k >= n do k, cycles = k - q, cycles + 1 end
end
local base = now
if k >= 0 then
  local entry = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - span), '+inf', 'WITHSCORES', 'LIMIT', k, 1)
  base = entry[2] and (tonumber(entry[2]) + span) or (now + span)
end
-- A little after the edge, once per span: an entry is restamped a few ms after its admission when
-- its answer comes, and the tickets ahead are admitted a few ms after their own edges. Without it,
-- most waiters would wake just before their slot frees and check twice.
local slack = tonumber(ARGV[13])
local wakeAt = math.max(now + 1, base + slack + cycles * (span + slack))
if n < q then
  local ahead = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now + grace - slack, 'WITHSCORES', 'LIMIT', 0, 2)
  for i = 1, #ahead, 2 do
    if ahead[i] ~= ticket then
      wakeAt = math.min(wakeAt, tonumber(ahead[i + 1]) + 1)
      break
    end
  end
end
if paced and rank >= burst - m then
  -- The pace's edge: the (m - burst + r)-th entry of the slice leaves it; past the slice's
  -- entries, the slices the tickets ahead will fill. Hardly any slack: this edge comes P times a span.
  local k2, edge = m - burst + rank, 0
  if k2 < m then
    local entry = redis.call('ZRANGEBYSCORE', KEYS[7], '(' .. (now - slice), '+inf', 'WITHSCORES', 'LIMIT', k2, 1)
    edge = entry[2] and (tonumber(entry[2]) + slice) or (now + slice)
  else
    edge = now + slice * (1 + math.floor((k2 - m) / burst))
  end
  wakeAt = math.max(wakeAt, edge + 2)
end
return waitFor(wakeAt - now, known)
`;

/**
 * Lua, the part of every observe that follows the headers: ARGV[6] policy quota or '', ARGV[7]
 * policy window (s) or '', ARGV[8] pause (ms) or '', ARGV[9] remaining r or ''. Any answer ends the
 * slow start's wait; one carrying r (not a 429) ends the slow start. Defines `paused` (the pause
 * set, ms, or 0) and `pauseFor(ms)`. Exported for the token bucket of bench/limiter.ts.
 */
export const OBSERVE_HEADERS = `
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[3], 'q', ARGV[6], 'w', ARGV[7])
  redis.call('PEXPIRE', KEYS[3], 86400000)
  q, w, known = tonumber(ARGV[6]), tonumber(ARGV[7]), 1
  span = math.ceil(w * 1000) + math.max(tonumber(ARGV[3]), math.ceil(w * 1000 * tonumber(ARGV[4])))
end
redis.call('HDEL', KEYS[3], 'probe')
local paused = 0
local function pauseFor(ms)
  ms = math.ceil(ms)
  local untilMs = now + ms
  if untilMs > tonumber(redis.call('GET', KEYS[2]) or '0') then
    redis.call('SET', KEYS[2], tostring(untilMs), 'PX', ms)
  end
  paused = math.max(paused, ms)
end
if ARGV[8] ~= '' then pauseFor(tonumber(ARGV[8])) end
if ARGV[9] ~= '' and known == 1 then redis.call('HSET', KEYS[3], 'counted', '1') end
`;

/**
 * Observe: the headers (`OBSERVE_HEADERS`, ARGV[6] to [9]), then the log. ARGV[10] reset t (s),
 * ARGV[11] lookback (ms), ARGV[12] lookback kept (ms), ARGV[13] member suffix, ARGV[14] the log
 * member of the caller's oldest unanswered request, restamped to now, or ''.
 * Returns {phantoms added, pause set (ms) or 0, 1 if an entry was restamped else 0}.
 */
export const OBSERVE = `${PRELUDE}
${OBSERVE_HEADERS}
local restamped = 0
if ARGV[14] ~= '' then
  local at = redis.call('ZSCORE', KEYS[1], ARGV[14])
  if at and tonumber(at) < now then
    redis.call('ZADD', KEYS[1], 'XX', now, ARGV[14])
    restamped = 1
  end
end
local foreign = 0
if ARGV[9] ~= '' and known == 1 then
  local r = tonumber(ARGV[9])
  local ours = redis.call('ZCOUNT', KEYS[1], '(' .. (now - span - tonumber(ARGV[11])), '+inf')
  foreign = q - r - ours
  if foreign > 0 then
    for i = 1, foreign do
      redis.call('ZADD', KEYS[1], now, 'other:' .. now .. ':' .. ARGV[13] .. ':' .. i)
    end
    redis.call('PEXPIRE', KEYS[1], span + tonumber(ARGV[12]))
    if r == 0 and tonumber(ARGV[10]) > 0 then pauseFor(tonumber(ARGV[10]) * 1000) end
  else
    foreign = 0
  end
end
return {foreign, paused, restamped}
`;
