-- SLIDING_TAIL (dev.sluice.algorithm.SlidingTailState): (w, cur, prev), the index w of the current window, its count
-- and the previous window's count. No key: no counts.

-- the least e in [0, W] with floor(count * (W - e) / W) <= target
local function tailElapsedWhenAtMost(W, count, target)
  if count <= target then
    return 0
  end
  local q, r = muldivmod(target + 1, W, count)
  if r > 0 then
    q = q + 1
  end
  return W - (q - 1)
end

-- time from now, elapsed into window w, until the estimate is at most target, with no further requests
local function tailUntilAtMost(W, elapsed, cur, prev, target)
  if cur <= target then
    return math.max(0, tailElapsedWhenAtMost(W, prev, target - cur) - elapsed)
  end
  return W - elapsed + tailElapsedWhenAtMost(W, cur, target)
end

local function tailSave(p, w, cur, prev)
  local expiresAt = nil
  if cur > 0 then
    expiresAt = (w + 2) * p.W
  elseif prev > 0 then
    expiresAt = (w + 1) * p.W
  end
  store(p, struct.pack('<ddd', w, cur, prev), expiresAt)
end

ALGORITHMS.tail = function(p)
  local key, mode, now, L, W, cost = p.key, p.mode, p.now, p.L, p.W, p.cost
  local w, cur, prev
  local v = readState(key)
  if v then
    w, cur, prev = struct.unpack('<ddd', v)
  else
    cur, prev = 0, 0
  end
  local k = floordiv(now, W)
  if w == nil or k > w then
    if w ~= nil and k == w + 1 then
      prev = cur
    else
      prev = 0
    end
    cur = 0
    w = k
  end

  if mode == 'g' then
    local place = p.place
    if place == w and cur > 0 then
      tailSave(p, w, math.max(0, cur - cost), prev)
      return {1}
    end
    if place == w - 1 and prev > 0 then
      tailSave(p, w, cur, math.max(0, prev - cost))
      return {1}
    end
    return {0}
  end

  local elapsed = math.max(now, w * W) - w * W
  local weighted = muldivmod(prev, W - elapsed, W) -- the previous window's count, weighted by what is left of it
  local ok = satadd(weighted, cur) <= L - cost
  if p.consume and (ok or p.countRejected) then
    cur = satadd(cur, cost)
    tailSave(p, w, cur, prev)
  end
  local remaining = math.max(0, L - satadd(weighted, cur))
  if ok then
    return {1, remaining, tailUntilAtMost(W, elapsed, cur, prev, 0), 0, w}
  end
  return {0, remaining, tailUntilAtMost(W, elapsed, cur, prev, 0), tailUntilAtMost(W, elapsed, cur, prev, L - cost),
    w}
end
