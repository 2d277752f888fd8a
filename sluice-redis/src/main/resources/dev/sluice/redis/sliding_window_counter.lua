-- SLIDING_WINDOW_COUNTER (dev.sluice.algorithm.SlidingWindowCounterState): sub-window k = [k*S, (k+1)*S) counts
-- while its start is after now - W (strict: while its end is).
ALGORITHMS.swc = function(p)
  return expiringLog(p, function()
    local start = floordiv(p.now, p.S) * p.S
    if p.strict then
      return start + p.W + p.S
    end
    return start + p.W
  end)
end
