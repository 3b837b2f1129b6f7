-- Replicas: who is alive and where (each replica announces itself at every heartbeat), and
-- which replica holds each conversation whose state lives in one process (a forms agent's
-- browser, an MCP session), so that the others forward its requests there.
CREATE TABLE replicas (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    seen_ms BIGINT NOT NULL
);
CREATE TABLE conversations (
    key TEXT PRIMARY KEY,
    replica TEXT NOT NULL,
    since_ms BIGINT NOT NULL
);
CREATE INDEX conversations_by_replica ON conversations (replica);
