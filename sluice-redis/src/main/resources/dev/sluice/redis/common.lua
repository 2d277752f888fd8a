-- Sluice: the part every algorithm's script shares. One script call decides one request (or gives permits back)
-- for one key, atomically. See RedisStore for the design; the algorithms mirror dev.sluice.algorithm exactly.
--
-- KEYS[1]  the key's state (a hash)
-- ARGV[1]  'a' acquire, 'p' peek (writes nothing), 'g' give back
-- ARGV[2]  now in microseconds since the epoch, or 'T' for the server's TIME
-- ARGV[3]  limit L          ARGV[4]  window W (us)     ARGV[5]  cost
-- ARGV[6]  countRejected '1' or '0'                    ARGV[7]  place (give back only)
-- ARGV[8]  extra milliseconds a key outlives its state
-- ARGV[9]  sub-window S (us), ARGV[10] strict '1' or '0' (sliding-window counter only)
--
-- Lua numbers are doubles: every value here is an integer below 2^53, so every sum, difference and comparison is
-- exact; products that may reach 2^53 go through muldivmod, which is exact for any operands below 2^53.

local key = KEYS[1]
local mode = ARGV[1]
local now
if ARGV[2] == 'T' then
  if redis.replicate_commands then
    redis.replicate_commands()
  end
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(ARGV[2])
end
local L = tonumber(ARGV[3])
local W = tonumber(ARGV[4])
local cost = tonumber(ARGV[5])
local countRejected = ARGV[6] == '1'
local place = tonumber(ARGV[7])
local margin = tonumber(ARGV[8])
local consume = mode == 'a'

local SAT = 4503599627370496    -- 2^52: counts saturate here
local TWO53 = 9007199254740992

-- floor(a / b) and a mod b, for a >= 0, b > 0 (fmod is exact; a / b rounded may not floor right)
local function divmod(a, b)
  local r = math.fmod(a, b)
  return (a - r) / b, r
end

-- q, r with a*b = q*c + r, 0 <= r < c, for integers 0 <= a, b < 2^53, 0 < c < 2^53, q < 2^53
local function muldivmod(a, b, c)
  local p = a * b
  if p < TWO53 then
    return divmod(p, c)
  end
  if a < b then
    a, b = b, a
  end
  local qa, ra = divmod(a, c)
  local q = qa * b
  if ra == 0 then
    return q, 0
  end
  p = ra * b
  if p < TWO53 then
    local q2, r2 = divmod(p, c)
    return q + q2, r2
  end
  -- ra*b by shift-and-add over the bits of b, keeping the remainder below c: every step is exact
  local bits, n = {}, 0
  while b > 0 do
    local bit = math.fmod(b, 2)
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

-- q, r with a*b + d = q*c + r, 0 <= r < c
local function muladddivmod(a, b, d, c)
  local q, r = muldivmod(a, b, c)
  local dq, dr = divmod(d, c)
  q = q + dq
  if dr >= c - r then
    return q + 1, dr - (c - r)
  end
  return q, r + dr
end

-- q, r with a*b - d = q*c + r, 0 <= r < c, for 0 <= d <= a*b
local function mulsubdivmod(a, b, d, c)
  local q, r = muldivmod(a, b, c)
  local dq, dr = divmod(d, c)
  q = q - dq
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

-- Sets the TTL of the key: until expiresAt (us, on the request's timeline), rounded up to the millisecond, plus
-- the margin; deletes the key when its state is already equivalent to a fresh one (expiresAt nil or passed).
local function expireAt(expiresAt)
  if expiresAt == nil or expiresAt <= now then
    redis.call('DEL', key)
    return
  end
  local ms, rest = divmod(expiresAt - now, 1000)
  if rest > 0 then
    ms = ms + 1
  end
  redis.call('PEXPIRE', key, ms + margin)
end

-- Writes the hash fields {name, value, ...} and the TTL, or deletes the key when the state is fresh.
local function save(fields, expiresAt)
  if expiresAt == nil or expiresAt <= now then
    redis.call('DEL', key)
    return
  end
  redis.call('HSET', key, unpack(fields))
  expireAt(expiresAt)
end

local function flag(b)
  if b then
    return 1
  end
  return 0
end
