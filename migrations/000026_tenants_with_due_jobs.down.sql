-- A binary that predates the function asks with its own statement.
DROP FUNCTION hubctl_tenants_with_due_jobs(text[]);
