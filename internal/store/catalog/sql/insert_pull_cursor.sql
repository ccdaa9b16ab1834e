INSERT INTO pull_cursors (subscription_id, updated_at) VALUES (@id, @created_at)
