SELECT id FROM events WHERE seq = ANY(@seqs) ORDER BY seq
