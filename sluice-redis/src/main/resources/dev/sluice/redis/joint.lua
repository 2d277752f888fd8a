-- A joint request, all or nothing: every part passes or none takes anything (dev.sluice.spi.AtomicJointDecider).
--
-- KEYS[i]  the state of part i, each key at most once
-- ARGV     per part, 9 fields: algorithm code, now, L, W, cost, countRejected, margin, S, strict (S and strict
--          ignored unless a sliding-window counter); 'T' as now reads TIME once for every part
-- answers  5 integers per part, in order: allowed, remaining, reset, retry after, place
--
-- First every part decides without consuming, each as it would alone. If all pass, each decides again consuming:
-- nothing ran in between, so each passes again and takes its cost. Otherwise only the parts that refused and count
-- rejections consume (and are refused again, counting it); every part answers what it said without consuming.
local n = #KEYS
local parts, decides, answers = {}, {}, {}
local all = true
for i = 1, n do
  local a = (i - 1) * 9
  decides[i] = ALGORITHMS[ARGV[a + 1]]
  parts[i] = part(KEYS[i], 'p', ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7], '0',
    ARGV[a + 8], ARGV[a + 9])
  answers[i] = decides[i](parts[i])
  all = all and answers[i][1] == 1
end
local out = {}
for i = 1, n do
  local p = parts[i]
  if all or (answers[i][1] ~= 1 and p.countRejected) then
    p.mode = 'a'
    p.consume = true
    local taken = decides[i](p)
    if all then
      answers[i] = taken
    end
  end
  for j = 1, 5 do
    out[(i - 1) * 5 + j] = answers[i][j]
  end
end
return out
