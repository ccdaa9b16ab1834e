SELECT b.owner, b.tenant_id, b.destination, b.state, b.open_until
FROM breaker_states b JOIN hub_instances i USING (owner)
WHERE i.heartbeat_at >= @cutoff
  AND (@tenant = '' OR (b.tenant_id = @tenant AND b.destination = @destination))
ORDER BY b.tenant_id, b.destination, b.open_until DESC, b.owner
