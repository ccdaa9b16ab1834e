SELECT hubctl_count_rows(@partition)
