-- lua_train.lua - the training workload of bench/pgo.py for Lua: recursion,
-- string building and patterns, sorting with a comparator, objects with
-- metatables. bench/workloads/lua_eval.lua measures on different code paths.
-- usage: lua lua_train.lua SCALE
local scale = tonumber(arg[1]) or 1

local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

local Account = {}
Account.__index = Account
function Account.new(id) return setmetatable({id = id, balance = 0, log = {}}, Account) end
function Account:deposit(v) self.balance = self.balance + v; self.log[#self.log + 1] = v end

local check = 0
for round = 1, scale do
  check = check + fib(24)
  local parts = {}
  for i = 1, 20000 do parts[#parts + 1] = tostring(i * round) end
  local s = table.concat(parts, ",")
  local n = 0
  for num in s:gmatch("%d+7") do n = n + #num end
  check = check + n + #s:gsub("1", "one")
  local t = {}
  for i = 1, 30000 do t[i] = (i * 7919 + round) % 10007 end
  table.sort(t, function(a, b) return a > b end)
  check = check + t[1] + t[#t]
  local accounts = {}
  for i = 1, 200 do accounts[i] = Account.new(i) end
  for i = 1, 60000 do accounts[i % 200 + 1]:deposit(i % 97) end
  for _, a in ipairs(accounts) do check = check + a.balance end
end
print(check)
