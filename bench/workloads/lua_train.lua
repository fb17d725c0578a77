-- lua_train.lua - the training workload of bench/pgo.py for Lua. The same
-- kinds of work as lua_eval.lua, written differently: float arithmetic (a
-- Mandelbrot set and a spectral norm instead of an n-body step), string
-- building, formatting and patterns, a coroutine pipeline, tables used as
-- arrays and records with metatables, sorting with a comparator, recursion.
-- A sample profile only helps code the training ran: a training run that
-- skips float arithmetic would teach the compiler that the interpreter's
-- float paths are cold.
-- usage: lua lua_train.lua SCALE
local scale = tonumber(arg[1]) or 1

local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

local function mandelbrot(w)
  local inside = 0
  for y = 0, w - 1 do
    local ci = 2 * y / w - 1
    for x = 0, w - 1 do
      local cr, zr, zi, k = 2.5 * x / w - 2, 0.0, 0.0, 0
      while k < 50 and zr * zr + zi * zi < 4 do zr, zi, k = zr * zr - zi * zi + cr, 2 * zr * zi + ci, k + 1 end
      if k == 50 then inside = inside + 1 end
    end
  end
  return inside
end

local function spectral(n)
  local function a(i, j) local ij = i + j - 1; return 1.0 / (ij * (ij - 1) * 0.5 + i) end
  local u, v = {}, {}
  for i = 1, n do u[i] = 1 end
  for _ = 1, 3 do
    for i = 1, n do local s = 0; for j = 1, n do s = s + a(i, j) * u[j] end; v[i] = s end
    for i = 1, n do local s = 0; for j = 1, n do s = s + a(j, i) * v[j] end; u[i] = s end
  end
  local vbv, vv = 0, 0
  for i = 1, n do vbv = vbv + u[i] * v[i]; vv = vv + v[i] * v[i] end
  return math.sqrt(vbv / vv)
end

local Account = {}
Account.__index = Account
function Account.new(id) return setmetatable({id = id, balance = 0, log = {}}, Account) end
function Account:deposit(v) self.balance = self.balance + v; self.log[#self.log + 1] = v end

local check = 0
for round = 1, scale do
  check = check + fib(22) + mandelbrot(120) + math.floor(spectral(90) * 1e6)
  local parts = {}
  for i = 1, 15000 do parts[#parts + 1] = string.format("%d-%04x-%s", i * round, i % 4096, ("z"):rep(i % 4)) end
  local s = table.concat(parts, ",")
  local n = 0
  for num in s:gmatch("%d+7") do n = n + #num end
  check = check + n + #s:gsub("1", "one") + s:byte(#s // 2)
  local producer = coroutine.create(function() for i = 1, 30000 do coroutine.yield((i * 7) % 1013) end end)
  while true do
    local ok, v = coroutine.resume(producer)
    if not v then break end
    check = check + v
  end
  local t = {}
  for i = 1, 20000 do t[i] = (i * 7919 + round) % 10007 end
  table.sort(t, function(x, y) return x > y end)
  check = check + t[1] + t[#t]
  local stack = {}
  for i = 1, 40000 do stack[#stack + 1] = i; if i % 4 == 0 then check = check + table.remove(stack) end end
  local accounts = {}
  for i = 1, 200 do accounts[i] = Account.new(i) end
  for i = 1, 40000 do accounts[i % 200 + 1]:deposit(i % 97) end
  for _, acc in ipairs(accounts) do check = check + acc.balance end
end
print(check)
