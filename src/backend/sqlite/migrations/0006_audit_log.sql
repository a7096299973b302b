-- 0006: the audit log of the task center's mutating API calls, newest first by id. Each insert
-- deletes the rows past the bound it is given (10,000 by default), so the table stays bounded.
CREATE TABLE audit_log (
  id     INTEGER PRIMARY KEY AUTOINCREMENT,
  at     INTEGER NOT NULL,
  -- admin, read or none: the token the call carried.
  token  TEXT NOT NULL,
  method TEXT NOT NULL,
  -- The route pattern, e.g. /api/v1/tasks/:id/run; `target` the id, queue or type in the path.
  route  TEXT NOT NULL,
  target TEXT,
  status INTEGER NOT NULL,
  code   TEXT
);
