SELECT hubctl_create_partition(@parent, @partition, @catch_all, @key, @lo, @hi, @fillfactor::integer)
