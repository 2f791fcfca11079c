DROP TABLE sign_ins;
ALTER TABLE users DROP COLUMN review_credentials;
ALTER TABLE users DROP COLUMN pending_email;
