UPDATE pull_cursors SET cursor_seq = @cursor_after, updated_at = now()
WHERE subscription_id = @subscription_id AND cursor_seq < @cursor_after
