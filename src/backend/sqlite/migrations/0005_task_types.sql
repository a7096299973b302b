-- 0005: the task types workers handle, with the JSON Schema of each defined payload (DESIGN §2:
-- typed at every door). Written by workers at start and every minute; read by the task center
-- and the CLI to validate payloads of known types before they are stored. `info` is the JSON
-- document of backend/task-types.ts, the same on both stores.
CREATE TABLE task_types (
  type TEXT PRIMARY KEY,
  info TEXT NOT NULL
) WITHOUT ROWID;
