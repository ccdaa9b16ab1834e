DELETE FROM operational_outbox WHERE seq = ANY(@seqs)
