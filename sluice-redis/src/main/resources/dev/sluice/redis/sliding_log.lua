-- SLIDING_LOG (dev.sluice.algorithm.SlidingLogState): a request at t counts while now < t + W.
ALGORITHMS.log = function(p)
  return expiringLog(p, function()
    return p.now + p.W
  end)
end
