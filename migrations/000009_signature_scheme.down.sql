ALTER TABLE subscriptions
    DROP COLUMN previous_signature_scheme,
    DROP COLUMN signature_scheme;
