-- Replicas: idempotent retries (dedup_ttl_secs) get the first answer whichever replica they
-- reach. One row per (caller, messageId): the request's content digest, and its answer once
-- there is one; forgotten when it expires.
CREATE TABLE requests (
    caller TEXT NOT NULL,
    message_id TEXT NOT NULL,
    content TEXT NOT NULL,
    answer TEXT,
    expires_ms BIGINT NOT NULL,
    PRIMARY KEY (caller, message_id)
);
CREATE INDEX requests_expiry ON requests (expires_ms);
