-- FIXED_WINDOW (dev.sluice.algorithm.FixedWindowState): hash {w = index of the window, n = count}.
local s = redis.call('HMGET', key, 'w', 'n')
local w = tonumber(s[1])
local n = tonumber(s[2]) or 0
local k = divmod(now, W)
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
    redis.call('DEL', key)
  else
    save({'w', w, 'n', n}, (w + 1) * W)
  end
  return {1}
end

local ok = n <= L - cost
if consume and (ok or countRejected) then
  n = satadd(n, cost)
  save({'w', w, 'n', n}, (w + 1) * W)
end
local reset = 0
if n > 0 then
  reset = untilEnd
end
local retry = 0
if not ok then
  retry = untilEnd
end
return {flag(ok), math.max(0, L - n), reset, retry, w}
