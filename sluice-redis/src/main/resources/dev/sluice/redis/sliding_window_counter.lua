-- SLIDING_WINDOW_COUNTER (dev.sluice.algorithm.SlidingWindowCounterState): sub-window k = [k*S, (k+1)*S) counts
-- while its start is after now - W (strict: while its end is).
local S = tonumber(ARGV[9])
local strict = ARGV[10] == '1'
local function expiryOf()
  local start = floordiv(now, S) * S
  if strict then
    return start + W + S
  end
  return start + W
end
