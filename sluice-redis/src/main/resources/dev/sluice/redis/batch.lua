-- Several requests in one run (RedisBatches), each decided in order as its own script would decide it, unless the
-- server's clock has passed its deadline: then it reads and writes nothing, since its caller has been answered.
--
-- KEYS     the parts' keys, request after request
-- ARGV     the number of limiters m, then 7 fields for each: algorithm code, L, W, countRejected, margin, S, strict
--          (the fields of part(); S and strict ignored unless a sliding-window counter); then the number of
--          requests, and per request: its deadline (microseconds by the server's clock, 0: none), its number of
--          parts n, or -n for a joint request (all or nothing, group.lua), and 3 fields per part: its limiter's index
--          (1 to m), cost, now ('T': the server's TIME, read once for the whole batch)
-- answers  the server's TIME in microseconds; then per request 1 and 5 integers per part (allowed, remaining, reset,
--          retry after, place), or 0 alone when it was past its deadline
--
-- A key read or written by several decisions of the batch is read from Redis once and written once (holdStates).
-- A single request refused without counting changes nothing, so the same request right after it (the same key,
-- limiter, cost and time: a hot key over its limit) is answered what it was, without deciding again.
local t = timeOf('T')
local out = {t}
local o = 1 -- #out
holdStates()
local limiters, bases = {}, {} -- by the limiter's index as sent ('1' to m)
local a = 2
for i = 1, tonumber(ARGV[1]) do
  -- one part per limiter, reused by every single request of the batch: an algorithm keeps nothing of its part
  local p = part(nil, 'a', '0', ARGV[a + 1], ARGV[a + 2], '0', ARGV[a + 3], ARGV[a + 4], '0', ARGV[a + 5], ARGV[a + 6])
  p.decide = ALGORITHMS[ARGV[a]]
  limiters[tostring(i)], bases[tostring(i)] = p, a
  a = a + 7
end
local k = 1
local count = tonumber(ARGV[a])
a = a + 1
-- the single request before, when it was refused without counting: its key, limiter, cost, time and answer
local lastKey, lastLimiter, lastCost, lastNow, last = nil, nil, nil, nil, nil
for _ = 1, count do
  local deadline, n = ARGV[a], tonumber(ARGV[a + 1])
  a = a + 2
  local joint = n < 0
  if joint then
    n = -n
  end
  if deadline ~= '0' and t > tonumber(deadline) then
    o = o + 1
    out[o] = 0
    a = a + 3 * n
  elseif joint and (n > 1 or limiters[ARGV[a]].countRejected) then
    o = o + 1
    out[o] = 1
    local parts = {}
    for i = 1, n do
      local b = bases[ARGV[a]]
      parts[i] = part(KEYS[k + i - 1], 'p', ARGV[a + 2], ARGV[b + 1], ARGV[b + 2], ARGV[a + 1], ARGV[b + 3], ARGV[b + 4],
        '0', ARGV[b + 5], ARGV[b + 6])
      parts[i].decide = limiters[ARGV[a]].decide
      a = a + 3
    end
    group(parts, out)
    o = #out
    lastKey = nil
  else
    -- one part, acquiring; also a joint request of one part that does not count rejections, which decides and
    -- answers as its single request would (group.lua)
    local key, limiter, cost, now = KEYS[k], ARGV[a], ARGV[a + 1], ARGV[a + 2]
    local r
    if key == lastKey and limiter == lastLimiter and cost == lastCost and now == lastNow then
      r = last
    else
      local p = limiters[limiter]
      p.key, p.cost, p.now = key, tonumber(cost), timeOf(now)
      r = p.decide(p)
      if r[1] == 0 and not p.countRejected then
        lastKey, lastLimiter, lastCost, lastNow, last = key, limiter, cost, now, r
      else
        lastKey = nil
      end
    end
    out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5], out[o + 6] = 1, r[1], r[2], r[3], r[4], r[5]
    o = o + 6
    a = a + 3
  end
  k = k + n
end
writeHeld()
return out
