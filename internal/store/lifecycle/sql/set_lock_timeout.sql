SELECT set_config('lock_timeout', @lock_timeout, true)
