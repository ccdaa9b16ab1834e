-- The readers of a binary that predates the view put the folded attempts
-- back in line themselves.
DROP VIEW all_delivery_attempts;
