-- 0007: what an audited call did beyond its target: every path parameter and a short summary of
-- the body of the calls that name their target there (a bulk action's action, q and dryRun …),
-- as a JSON object of scalars (backend/audit-contract.ts AuditDetail); NULL for none.
ALTER TABLE audit_log ADD COLUMN detail TEXT;
