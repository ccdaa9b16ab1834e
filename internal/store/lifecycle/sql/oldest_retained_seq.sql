SELECT min(seq) FROM events WHERE seq >= @lowest_kept
