-- Decoding JSON text that may hold lone surrogate escapes.

-- cjson refuses a \u escape of half a surrogate pair that stands alone (JSON.stringify writes
-- one for a JS string with a lone surrogate). Such text — a record stored before enqueue refused
-- lone surrogates, or a log line — is decoded with each lone half read as U+FFFD (re-encoded so
-- when the record is next written), rather than failing every script that reads it: one task
-- must not stop its queue's claims and counts.
local function without_lone_surrogates(raw)
  local out, from, at = {}, 1, 1
  while true do
    at = string.find(raw, '\\', at, true)
    if not at then break end
    if string.sub(raw, at + 1, at + 1) ~= 'u' then
      at = at + 2 -- an escaped character (\\ included): skipped whole
    else
      local code = tonumber(string.sub(raw, at + 2, at + 5), 16) or 0
      local low = string.sub(raw, at + 6, at + 7) == '\\u' and tonumber(string.sub(raw, at + 8, at + 11), 16) or 0
      if code >= 0xD800 and code <= 0xDBFF and low >= 0xDC00 and low <= 0xDFFF then
        at = at + 12 -- a pair
      elseif code >= 0xD800 and code <= 0xDFFF then
        out[#out + 1] = string.sub(raw, from, at - 1)
        out[#out + 1] = '\\ufffd'
        at = at + 6
        from = at
      else
        at = at + 6
      end
    end
  end
  if from == 1 then return raw end
  out[#out + 1] = string.sub(raw, from)
  return table.concat(out)
end

-- cjson.decode, reading lone surrogate escapes as U+FFFD (see above).
local function decode_json(raw)
  local ok, value = pcall(cjson.decode, raw)
  if ok then return value end
  local repaired = without_lone_surrogates(raw)
  if repaired == raw then error(value) end
  return cjson.decode(repaired)
end
