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
-- A request refused without taking anything (no part consumed: refused, and no refusing part counts rejections)
-- changes nothing, so the same request right after it (the same parts: keys, limiters, costs and times; the callers
-- of a hot key over its limit send the same check) is answered what it was, without deciding again.
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

-- The last request decided that took nothing: where its parts' fields start in ARGV and its keys in KEYS, its number
-- of parts as sent, where its answer starts in out, and its first part's key, limiter, cost and time; lastA nil when
-- there is none.
local lastA, lastK, lastSent, lastO = nil, 0, 0, 0
local lastKey, lastLimiter, lastCost, lastNow

-- Whether the parts 2 to n of the request whose parts' fields start at ARGV[a] and keys at KEYS[k] are those of that
-- one (its first part, its number of parts and its being joint compared by the caller, the usual request having one).
local function sameRest(a, k, n)
  for i = 1, n - 1 do
    local x, y = a + 3 * i, lastA + 3 * i
    if KEYS[k + i] ~= KEYS[lastK + i] or ARGV[x] ~= ARGV[y] or ARGV[x + 1] ~= ARGV[y + 1]
        or ARGV[x + 2] ~= ARGV[y + 2] then
      return false
    end
  end
  return true
end

for _ = 1, count do
  local deadline, sent = ARGV[a], tonumber(ARGV[a + 1])
  a = a + 2
  local n = sent < 0 and -sent or sent
  if deadline ~= '0' and t > tonumber(deadline) then
    o = o + 1
    out[o] = 0
  elseif lastA ~= nil and sent == lastSent and KEYS[k] == lastKey and ARGV[a] == lastLimiter and ARGV[a + 1] == lastCost
      and ARGV[a + 2] == lastNow and (n == 1 or sameRest(a, k, n)) then
    -- the request that took nothing, again: its answer (1, then 5 integers per part) once more
    local l = lastO
    out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5], out[o + 6] =
      out[l], out[l + 1], out[l + 2], out[l + 3], out[l + 4], out[l + 5]
    for i = 6, 5 * n do
      out[o + 1 + i] = out[l + i]
    end
    o = o + 1 + 5 * n
  else
    local start = o + 1
    local took
    if sent < 0 then
      o = o + 1
      out[o] = 1
      local parts = {}
      for i = 1, n do
        local x = a + 3 * (i - 1)
        local b = bases[ARGV[x]]
        parts[i] = part(KEYS[k + i - 1], 'p', ARGV[x + 2], ARGV[b + 1], ARGV[b + 2], ARGV[x + 1], ARGV[b + 3],
          ARGV[b + 4], '0', ARGV[b + 5], ARGV[b + 6])
        parts[i].decide = limiters[ARGV[x]].decide
      end
      took = group(parts, out)
      o = #out
    else
      -- one part, acquiring
      local p = limiters[ARGV[a]]
      p.key, p.cost, p.now = KEYS[k], tonumber(ARGV[a + 1]), timeOf(ARGV[a + 2])
      local r = p.decide(p)
      out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5], out[o + 6] = 1, r[1], r[2], r[3], r[4], r[5]
      o = o + 6
      took = r[1] == 1 or p.countRejected
    end
    if took then
      lastA = nil
    else
      lastA, lastK, lastSent, lastO = a, k, sent, start
      lastKey, lastLimiter, lastCost, lastNow = KEYS[k], ARGV[a], ARGV[a + 1], ARGV[a + 2]
    end
  end
  a = a + 3 * n
  k = k + n
end
writeHeld()
return out
