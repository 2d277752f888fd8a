-- Sluice: the part every script shares. A script decides one request for one key (or gives permits back), or a
-- joint request over several keys, atomically. See RedisStore for the design; the algorithms mirror
-- dev.sluice.algorithm exactly.
--
-- Each algorithm is a function in ALGORITHMS, named by its code, deciding one part p (see part() below) and
-- answering {allowed 1/0, remaining, reset (us), retry after (us), place}, or {1/0} for a give-back. A script is this
-- file, the algorithms it needs, and a tail that reads its arguments into parts: single.lua, or group.lua and
-- batch.lua.
--
-- Lua numbers are doubles: every value here is an integer below 2^53, so every sum, difference and comparison is
-- exact; products that may reach 2^53 go through muldivmod, which is exact for any operands below 2^53. A bucket's or
-- a window's state is a string of little-endian doubles (struct.pack '<d...'): exact, and the cheapest to read and
-- write from Lua.
-- Redis 5 and later replicate a script by its effects, so reading TIME before writing is allowed.

local ALGORITHMS = {}

local storeTime = nil  -- the server's TIME, read once per script run
local function timeOf(arg)
  local t = tonumber(arg)
  if t ~= nil then
    return t
  end
  if storeTime == nil then  -- 'T'
    local r = redis.call('TIME')
    storeTime = tonumber(r[1]) * 1000000 + tonumber(r[2])
  end
  return storeTime
end

-- One part of a request:
--   key     the key's state              mode    'a' acquire, 'p' peek (writes nothing), 'g' give back
--   now     microseconds since the epoch, or 'T' for the server's TIME
--   L       limit                        W       window (us)         cost
--   countRejected '1' or '0'             margin  extra milliseconds a key outlives its state
--   place   give back only               S, strict  sub-window (us) and '1' or '0', sliding-window counter only
local function part(key, mode, now, L, W, cost, countRejected, margin, place, S, strict)
  return {
    key = key, mode = mode, consume = mode == 'a', now = timeOf(now),
    L = tonumber(L), W = tonumber(W), cost = tonumber(cost),
    countRejected = countRejected == '1', margin = tonumber(margin), place = tonumber(place),
    S = tonumber(S), strict = strict == '1'
  }
end

local SAT = 4503599627370496    -- 2^52: counts saturate here
local TWO53 = 9007199254740992
local fmod = math.fmod          -- exact, unlike a / b rounded then floored

-- floor(a / b) for b > 0, also for a < 0 (times before the epoch)
local function floordiv(a, b)
  local r = fmod(a, b)
  if r < 0 then
    r = r + b
  end
  return (a - r) / b
end

-- q, r with a*b = q*c + r, 0 <= r < c, for integers 0 <= a, b < 2^53, 0 < c < 2^53, q < 2^53
local function muldivmod(a, b, c)
  local p = a * b
  if p < TWO53 then
    local r = fmod(p, c)
    return (p - r) / c, r
  end
  if a < b then
    a, b = b, a
  end
  local ra = fmod(a, c)
  local q = (a - ra) / c * b
  p = ra * b
  if p < TWO53 then
    local r = fmod(p, c)
    return q + (p - r) / c, r
  end
  -- ra*b by shift-and-add over the bits of b, keeping the remainder below c: every step is exact
  local bits, n = {}, 0
  while b > 0 do
    local bit = fmod(b, 2)
    n = n + 1
    bits[n] = bit
    b = (b - bit) / 2
  end
  local q2, r = 0, 0
  for i = n, 1, -1 do
    q2 = q2 * 2
    local d = c - r
    if r >= d then
      r = r - d
      q2 = q2 + 1
    else
      r = r + r
    end
    if bits[i] == 1 then
      d = c - r
      if ra >= d then
        r = ra - d
        q2 = q2 + 1
      else
        r = r + ra
      end
    end
  end
  return q + q2, r
end

-- q, r with a*b + d = q*c + r, 0 <= r < c, for 0 <= d < 2^53
local function muladddivmod(a, b, d, c)
  local q, r = muldivmod(a, b, c)
  local dr = fmod(d, c)
  q = q + (d - dr) / c
  if dr >= c - r then
    return q + 1, dr - (c - r)
  end
  return q, r + dr
end

-- q, r with a*b - d = q*c + r, 0 <= r < c, for 0 <= d <= a*b
local function mulsubdivmod(a, b, d, c)
  local q, r = muldivmod(a, b, c)
  local dr = fmod(d, c)
  q = q - (d - dr) / c
  if r >= dr then
    return q, r - dr
  end
  return q - 1, r + (c - dr)
end

local function satadd(a, b)
  local s = a + b
  if s > SAT then
    return SAT
  end
  return s
end

-- The TTL in milliseconds of a state that becomes equivalent to a fresh one at expiresAt (us, on the request's
-- timeline): the time until then rounded up, plus the margin.
local function ttl(p, expiresAt)
  local d = expiresAt - p.now
  local r = fmod(d, 1000)
  local ms = (d - r) / 1000
  if r > 0 then
    ms = ms + 1
  end
  return ms + p.margin
end

-- A key's state (a string of packed doubles) is read with readState and written with writeState or deleteState. Run
-- by single.lua, each goes straight to Redis. In a batch (batch.lua calls holdStates first and writeHeld last), a key
-- is read from Redis once and written once, at the end: a key decided n times in one batch costs two calls, not 2n.
-- Nothing runs between a script's calls, so each decision reads what the one before it left, as it would one by one.
-- The sliding log and the sliding-window counter keep a hash (expiring_log.lua) and call Redis directly.
local states = nil  -- key -> its state as the batch has left it so far, false for none; nil outside a batch
local writes = nil  -- key -> the TTL in milliseconds of its state's last write, or -1 for a delete

local function readState(key)
  if states == nil then
    return redis.call('GET', key)
  end
  local v = states[key]
  if v == nil then
    v = redis.call('GET', key)
    states[key] = v
  end
  return v
end

local function deleteState(key)
  if states == nil then
    redis.call('DEL', key)
  else
    states[key] = false
    writes[key] = -1
  end
end

local function writeState(key, value, ms)
  if states == nil then
    redis.call('SET', key, value, 'PX', ms)
  else
    states[key] = value
    writes[key] = ms
  end
end

local function holdStates()
  states, writes = {}, {}
end

local function writeHeld()
  for key, ms in pairs(writes) do
    if ms < 0 then
      redis.call('DEL', key)
    else
      redis.call('SET', key, states[key], 'PX', ms)
    end
  end
  states, writes = nil, nil
end

-- Writes the state with its TTL, or deletes the key when the state is already equivalent to a fresh one (expiresAt
-- nil or passed).
local function store(p, value, expiresAt)
  if expiresAt == nil or expiresAt <= p.now then
    deleteState(p.key)
  else
    writeState(p.key, value, ttl(p, expiresAt))
  end
end
