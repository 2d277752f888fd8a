-- LEAKY_BUCKET (dev.sluice.algorithm.LeakyBucketState), GCRA: "<tat> <frac>", the theoretical arrival time and its
-- fractional microsecond as a numerator over L. No key: an empty bucket.
local tat, frac
local v = redis.call('GET', key)
if v then
  local a, b = string.match(v, '^(%d+) (%d+)$')
  tat, frac = tonumber(a), tonumber(b)
  if frac >= L then  -- written under a higher limit: round the level up
    tat = tat + 1
    frac = 0
  end
else
  frac = 0
end

local function emptyAt()
  return tat == nil or tat < now or (tat == now and frac == 0)
end

local function save()
  local expiresAt = tat
  if frac > 0 then
    expiresAt = tat + 1
  end
  store(string.format('%d %d', tat, frac), expiresAt)
end

local inc, incFrac = muldivmod(cost, W, L)

if mode == 'g' then
  if emptyAt() then
    return {0}
  end
  local t = tat - inc
  local f = frac - incFrac
  if f < 0 then
    t = t - 1
    f = f + L
  end
  if t < now or (t == now and f == 0) then
    redis.call('DEL', key)
  else
    tat = t
    frac = f
    save()
  end
  return {1}
end

local nxt, nxtFrac
if emptyAt() then
  nxt = now + inc
  nxtFrac = incFrac
else
  nxt = tat + inc
  nxtFrac = frac + incFrac
end
if nxtFrac >= L then
  nxt = nxt + 1
  nxtFrac = nxtFrac - L
end
local deadline = now + W
local ok = nxt < deadline or (nxt == deadline and nxtFrac == 0)
if consume then
  if ok then
    tat = nxt
    frac = nxtFrac
    save()
  elseif countRejected then
    tat = deadline  -- full, never fuller
    frac = 0
    nxt = deadline + inc
    nxtFrac = incFrac
    save()
  end
end

local remaining = L
local reset = 0
if not emptyAt() then
  local headroom = now + W - tat
  if headroom <= 0 then
    remaining = 0
  else
    remaining = mulsubdivmod(headroom, L, frac, W)
  end
  reset = tat - now
  if frac > 0 then
    reset = reset + 1
  end
end
if ok then
  return {1, remaining, reset, 0, 0}
end
local retry = nxt - deadline
if nxtFrac > 0 then
  retry = retry + 1
end
return {0, remaining, reset, retry, 0}
