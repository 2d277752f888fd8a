-- FIXED_WINDOW (dev.sluice.algorithm.FixedWindowState): (w, n), the index w of the window [w*W, (w+1)*W) and its
-- count n. No key: no window.
ALGORITHMS.fw = function(p)
  local key, mode, now, L, W, cost = p.key, p.mode, p.now, p.L, p.W, p.cost
  local countRejected, place, consume = p.countRejected, p.place, p.consume
  local w, n
  local v = readState(key)
  if v then
    w, n = struct.unpack('<dd', v)
  else
    n = 0
  end
  local k = floordiv(now, W)
  if w == nil or k > w then
    w = k
    n = 0
  end
  local untilEnd = (w + 1) * W - math.max(now, w * W)

  if mode == 'g' then
    if place ~= w or n == 0 then
      return {0}
    end
    n = math.max(0, n - cost)
    if n == 0 then
      deleteState(key)
    else
      store(p, struct.pack('<dd', w, n), (w + 1) * W)
    end
    return {1}
  end

  local ok = n <= L - cost
  if consume and (ok or countRejected) then
    n = satadd(n, cost)
    store(p, struct.pack('<dd', w, n), (w + 1) * W)
  end
  local reset = 0
  if n > 0 then
    reset = untilEnd
  end
  if ok then
    return {1, math.max(0, L - n), reset, 0, w}
  end
  return {0, math.max(0, L - n), reset, untilEnd, w}
end
