DELETE FROM hub_instances WHERE owner = @owner
