-- Sluice: the part every algorithm's script shares. One script call decides one request (or gives permits back)
-- for one key, atomically. See RedisStore for the design; the algorithms mirror dev.sluice.algorithm exactly.
--
-- KEYS[1]  the key's state
-- ARGV[1]  'a' acquire, 'p' peek (writes nothing), 'g' give back
-- ARGV[2]  now in microseconds since the epoch, or 'T' for the server's TIME
-- ARGV[3]  limit L          ARGV[4]  window W (us)     ARGV[5]  cost
-- ARGV[6]  countRejected '1' or '0'                    ARGV[7]  extra milliseconds a key outlives its state
-- ARGV[8]  place (give back only; '0' otherwise, or absent)
-- ARGV[9]  sub-window S (us), ARGV[10] strict '1' or '0' (sliding-window counter only)
--
-- Lua numbers are doubles: every value here is an integer below 2^53, so every sum, difference and comparison is
-- exact; products that may reach 2^53 go through muldivmod, which is exact for any operands below 2^53. A bucket's or
-- a window's state is a string of little-endian doubles (struct.pack '<d...'): exact, and the cheapest to read and
-- write from Lua.
-- Redis 5 and later replicate a script by its effects, so reading TIME before writing is allowed.

local key = KEYS[1]
local mode = ARGV[1]
local now = tonumber(ARGV[2])
if now == nil then  -- 'T'
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local L = tonumber(ARGV[3])
local W = tonumber(ARGV[4])
local cost = tonumber(ARGV[5])
local countRejected = ARGV[6] == '1'
local margin = tonumber(ARGV[7])
local place = tonumber(ARGV[8])
local consume = mode == 'a'

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
local function ttl(expiresAt)
  local d = expiresAt - now
  local r = fmod(d, 1000)
  local ms = (d - r) / 1000
  if r > 0 then
    ms = ms + 1
  end
  return ms + margin
end

-- Writes the state (a string of packed doubles) with its TTL, or deletes the key when the state is already equivalent to a fresh
-- one (expiresAt nil or passed).
local function store(value, expiresAt)
  if expiresAt == nil or expiresAt <= now then
    redis.call('DEL', key)
  else
    redis.call('SET', key, value, 'PX', ttl(expiresAt))
  end
end
