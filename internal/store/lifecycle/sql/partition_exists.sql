SELECT to_regclass(@partition) IS NOT NULL
