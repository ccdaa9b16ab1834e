-- How a webhook subscription signs (docs/api.md, Signature schemes).
-- previous_signature_scheme is the scheme the rotated-out secret signs in
-- during its overlap when a switch of scheme rotated it; NULL means the
-- same scheme as the current secret.
ALTER TABLE subscriptions
    ADD COLUMN signature_scheme text NOT NULL DEFAULT 'lerian'
        CHECK (signature_scheme IN ('lerian', 'standard-webhooks')),
    ADD COLUMN previous_signature_scheme text
        CHECK (previous_signature_scheme IN ('lerian', 'standard-webhooks'));
