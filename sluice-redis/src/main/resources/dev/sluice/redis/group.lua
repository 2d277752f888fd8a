-- One request over the parts KEYS[k .. k + n - 1], whose 9 fields each start at ARGV[a]: algorithm code, now, L, W,
-- cost, countRejected, margin, S, strict (S and strict ignored unless a sliding-window counter); 'T' as now reads
-- TIME once for every part. Appends 5 integers per part to out, in order: allowed, remaining, reset, retry after,
-- place.
--
-- joint false: one part, deciding consuming at once, as single.lua does.
-- joint true: all or nothing (dev.sluice.spi.AtomicJointDecider). First every part decides without consuming, each
-- as it would alone. If all pass, each decides again consuming: nothing ran in between, so each passes again and
-- takes its cost. Otherwise only the parts that refused and count rejections consume (and are refused again, counting
-- it); every part answers what it said without consuming.
local function group(k, a, n, joint, out)
  local parts, decides, answers = {}, {}, {}
  local all = true
  for i = 1, n do
    local b = a + (i - 1) * 9
    decides[i] = ALGORITHMS[ARGV[b]]
    parts[i] = part(KEYS[k + i - 1], joint and 'p' or 'a', ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4],
      ARGV[b + 5], ARGV[b + 6], '0', ARGV[b + 7], ARGV[b + 8])
    answers[i] = decides[i](parts[i])
    all = all and answers[i][1] == 1
  end
  for i = 1, n do
    local p = parts[i]
    if joint and (all or (answers[i][1] ~= 1 and p.countRejected)) then
      p.mode = 'a'
      p.consume = true
      local taken = decides[i](p)
      if all then
        answers[i] = taken
      end
    end
    for j = 1, 5 do
      out[#out + 1] = answers[i][j]
    end
  end
end
