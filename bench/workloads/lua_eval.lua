-- lua_eval.lua - the evaluation workload of bench/pgo.py for Lua: float
-- arithmetic (an n-body step), string.format and byte work, a coroutine
-- generator, a queue, a sieve. Not the training workload: a profile must
-- carry over to code paths weighted differently.
-- usage: lua lua_eval.lua SCALE
local scale = tonumber(arg[1]) or 1

local function nbody(steps)
  local b = {}
  for i = 1, 5 do b[i] = {x = i, y = i * 0.5, z = -i, vx = 0, vy = 0, vz = 0, m = 1 / i} end
  for _ = 1, steps do
    for i = 1, #b do
      local bi = b[i]
      for j = i + 1, #b do
        local bj = b[j]
        local dx, dy, dz = bi.x - bj.x, bi.y - bj.y, bi.z - bj.z
        local d2 = dx * dx + dy * dy + dz * dz + 0.01
        local mag = 0.01 / (d2 * math.sqrt(d2))
        bi.vx = bi.vx - dx * bj.m * mag; bj.vx = bj.vx + dx * bi.m * mag
        bi.vy = bi.vy - dy * bj.m * mag; bj.vy = bj.vy + dy * bi.m * mag
        bi.vz = bi.vz - dz * bj.m * mag; bj.vz = bj.vz + dz * bi.m * mag
      end
    end
    for i = 1, #b do local bi = b[i]; bi.x = bi.x + 0.01 * bi.vx; bi.y = bi.y + 0.01 * bi.vy; bi.z = bi.z + 0.01 * bi.vz end
  end
  return b[1].x + b[5].z
end

local function gen(n)
  return coroutine.wrap(function() for i = 1, n do coroutine.yield(i * i % 1009) end end)
end

local check = 0
for _ = 1, scale do
  check = check + math.floor(nbody(20000) * 1000)
  local sum = 0
  for i = 1, 20000 do
    local s = string.format("%05d:%x:%s", i, i * 31, string.rep("ab", i % 5))
    sum = sum + s:byte(1) + #s
  end
  check = check + sum
  for v in gen(40000) do check = check + v end
  local q, head = {}, 1
  for i = 1, 50000 do q[#q + 1] = i; if i % 3 == 0 then check = check + q[head]; q[head] = nil; head = head + 1 end end
  local sieve, primes = {}, 0
  for i = 2, 100000 do
    if not sieve[i] then primes = primes + 1; for k = i * i, 100000, i do sieve[k] = true end end
  end
  check = check + primes
end
print(string.format("%.0f", check))
