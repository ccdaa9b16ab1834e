SELECT datname FROM pg_database WHERE starts_with(datname, @template_prefix) OR starts_with(datname, @test_db_prefix)
