INSERT INTO tenants (id, status, created_at, updated_at)
VALUES (@id, @status, @at, @at)
ON CONFLICT (id) DO NOTHING
RETURNING id, status, created_at, updated_at
