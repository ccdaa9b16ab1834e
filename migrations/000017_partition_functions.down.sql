DROP FUNCTION hubctl_has_rows(text);
DROP FUNCTION hubctl_count_rows(text);
DROP FUNCTION hubctl_create_partition(text, text, text, text, text, text);
