SELECT hubctl_create_partition(parent => @parent, part => @partition, catch_all => NULL, key => NULL, lo => NULL, hi => @hi, fillfactor => NULL)
