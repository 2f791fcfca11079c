-- Allowances shared by every server process on one database (src/limits.rs): failed logins,
-- registrations and account mails, counted once however many processes a client spreads its
-- requests over. One row per limit and key, kept by GCRA: the theoretical arrival time of the
-- next request, in microseconds since 1970. A row whose time has passed holds a whole allowance
-- and is deleted by the background sweep.
CREATE TABLE rate_limits (
    -- A digest of the limit's name and its key (a client address, an account, an email
    -- address), so the table holds no address in clear.
    key TEXT PRIMARY KEY NOT NULL,
    tat BIGINT NOT NULL,
    -- Whether the last request counted was let through: written by the same statement that
    -- counts it, so one statement both counts and answers.
    allowed INTEGER NOT NULL CHECK (allowed IN (0, 1))
);
CREATE INDEX rate_limits_tat ON rate_limits (tat);
