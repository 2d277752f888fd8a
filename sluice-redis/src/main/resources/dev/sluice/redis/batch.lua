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
local t = timeOf('T')
local out = {t}
holdStates()
local limiters, bases = {}, {}
local a = 2
for i = 1, tonumber(ARGV[1]) do
  -- one part per limiter, reused by every single request of the batch: an algorithm keeps nothing of its part
  local p = part(nil, 'a', '0', ARGV[a + 1], ARGV[a + 2], '0', ARGV[a + 3], ARGV[a + 4], '0', ARGV[a + 5], ARGV[a + 6])
  p.decide = ALGORITHMS[ARGV[a]]
  limiters[i], bases[i] = p, a
  a = a + 7
end
local k = 1
local count = tonumber(ARGV[a])
a = a + 1
for _ = 1, count do
  local deadline, n = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  a = a + 2
  local joint = n < 0
  if joint then
    n = -n
  end
  if deadline ~= 0 and t > deadline then
    out[#out + 1] = 0
    a = a + 3 * n
  elseif joint and (n > 1 or limiters[tonumber(ARGV[a])].countRejected) then
    out[#out + 1] = 1
    local parts = {}
    for i = 1, n do
      local c, b = tonumber(ARGV[a]), bases[tonumber(ARGV[a])]
      parts[i] = part(KEYS[k + i - 1], 'p', ARGV[a + 2], ARGV[b + 1], ARGV[b + 2], ARGV[a + 1], ARGV[b + 3], ARGV[b + 4],
        '0', ARGV[b + 5], ARGV[b + 6])
      parts[i].decide = limiters[c].decide
      a = a + 3
    end
    group(parts, out)
  else
    -- one part, acquiring; also a joint request of one part that does not count rejections, which decides and
    -- answers as its single request would (group.lua)
    out[#out + 1] = 1
    local p = limiters[tonumber(ARGV[a])]
    p.key, p.cost, p.now = KEYS[k], tonumber(ARGV[a + 1]), timeOf(ARGV[a + 2])
    local r = p.decide(p)
    local o = #out
    out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5] = r[1], r[2], r[3], r[4], r[5]
    a = a + 3
  end
  k = k + n
end
writeHeld()
return out
