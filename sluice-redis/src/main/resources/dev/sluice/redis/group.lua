-- One joint request, all or nothing (dev.sluice.spi.AtomicJointDecider), over parts: part() tables in mode 'p', each
-- with its algorithm's function as decide. Appends 5 integers per part to out, in order: allowed, remaining, reset,
-- retry after, place. Answers whether it took anything: false when no part consumed, the keys left as they were.
--
-- First every part decides without consuming, each as it would alone. If all pass, each decides again consuming:
-- nothing ran in between, so each passes again and takes its cost. Otherwise only the parts that refused and count
-- rejections consume (and are refused again, counting it); every part answers what it said without consuming.
local function group(parts, out)
  local answers = {}
  local all = true
  local took = false
  for i = 1, #parts do
    local p = parts[i]
    answers[i] = p.decide(p)
    all = all and answers[i][1] == 1
  end
  for i = 1, #parts do
    local p = parts[i]
    if all or (answers[i][1] ~= 1 and p.countRejected) then
      p.mode = 'a'
      p.consume = true
      took = true
      local taken = p.decide(p)
      if all then
        answers[i] = taken
      end
    end
    for j = 1, 5 do
      out[#out + 1] = answers[i][j]
    end
  end
  return took
end
