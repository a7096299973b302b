-- Moves due scheduled and retrying tasks to queued. ARGV 4 limit. Returns how many moved.
return forward_due(tonumber(ARGV[4]))
