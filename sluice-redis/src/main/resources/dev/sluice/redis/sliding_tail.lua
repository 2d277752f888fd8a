-- SLIDING_TAIL (dev.sluice.algorithm.SlidingTailState): (w, cur, prev), the index w of the current window, its count
-- and the previous window's count. No key: no counts.
ALGORITHMS.tail = function(p)
  local key, mode, now, L, W, cost = p.key, p.mode, p.now, p.L, p.W, p.cost
  local countRejected, place, consume = p.countRejected, p.place, p.consume
  local w, cur, prev
  local v = redis.call('GET', key)
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
  local elapsed = math.max(now, w * W) - w * W

  local function save()
    local expiresAt = nil
    if cur > 0 then
      expiresAt = (w + 2) * W
    elseif prev > 0 then
      expiresAt = (w + 1) * W
    end
    store(p, struct.pack('<ddd', w, cur, prev), expiresAt)
  end

  if mode == 'g' then
    if place == w and cur > 0 then
      cur = math.max(0, cur - cost)
      save()
      return {1}
    end
    if place == w - 1 and prev > 0 then
      prev = math.max(0, prev - cost)
      save()
      return {1}
    end
    return {0}
  end

  local function estimate()
    local weighted = muldivmod(prev, W - elapsed, W)
    return satadd(weighted, cur)
  end

  -- the least e in [0, W] with floor(count * (W - e) / W) <= target
  local function elapsedWhenWeightedAtMost(count, target)
    if count <= target then
      return 0
    end
    local q, r = muldivmod(target + 1, W, count)
    if r > 0 then
      q = q + 1
    end
    return W - (q - 1)
  end

  -- time from now until the estimate is at most target, with no further requests
  local function untilAtMost(target)
    if cur <= target then
      return math.max(0, elapsedWhenWeightedAtMost(prev, target - cur) - elapsed)
    end
    return W - elapsed + elapsedWhenWeightedAtMost(cur, target)
  end

  local ok = estimate() <= L - cost
  if consume and (ok or countRejected) then
    cur = satadd(cur, cost)
    save()
  end
  local remaining = math.max(0, L - estimate())
  if ok then
    return {1, remaining, untilAtMost(0), 0, w}
  end
  return {0, remaining, untilAtMost(0), untilAtMost(L - cost), w}
end
