-- The delay before a retry.

-- Backoff as in core/backoff.ts: exponential with up to 25 % jitter, or fixed.
local function backoff_delay(spec, attempt, default_base, default_max)
  if spec and spec.type == 'fixed' then return spec.delay end
  local base = (spec and spec.base) or default_base
  local max = (spec and spec.max) or default_max
  local exponent = attempt - 1
  if exponent < 0 then exponent = 0 end
  if exponent > 52 then exponent = 52 end
  local raw = math.min(max, base * (2 ^ exponent))
  return math.floor(raw + raw * 0.25 * math.random() + 0.5)
end
