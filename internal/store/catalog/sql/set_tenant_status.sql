UPDATE tenants
SET status = @status,
    updated_at = CASE WHEN status = @status THEN updated_at ELSE @at END
WHERE id = @id
RETURNING id, status, created_at, updated_at
