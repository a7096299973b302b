-- The delay before a retry.

-- Backoff as in core/backoff.ts: exponential with up to `defaults.jitter` of jitter, or fixed.
-- `defaults`: the base, max and jitter fraction of a task without its own (core/backoff.ts).
local function backoff_delay(spec, attempt, defaults)
  if spec and spec.type == 'fixed' then return spec.delay end
  local base = (spec and spec.base) or defaults.base
  local max = (spec and spec.max) or defaults.max
  local exponent = attempt - 1
  if exponent < 0 then exponent = 0 end
  if exponent > 52 then exponent = 52 end
  local raw = math.min(max, base * (2 ^ exponent))
  return math.floor(raw + raw * defaults.jitter * math.random() + 0.5)
end
