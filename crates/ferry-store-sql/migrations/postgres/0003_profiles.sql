-- Saved profiles (ferry-store-sql, PostgreSQL): named form values per owner, a caller in a
-- tenant, which the forms agent fills forms from. `form_values` is a JSON object of text
-- values (TEXT, like snapshots: the store never looks inside); `version` is the optimistic
-- concurrency counter, 1 at creation.

CREATE TABLE profiles (
    tenant      TEXT COLLATE "C" NOT NULL,
    caller      TEXT COLLATE "C" NOT NULL,
    name        TEXT COLLATE "C" NOT NULL,
    form_values TEXT             NOT NULL,
    cards       BOOLEAN          NOT NULL,
    version     BIGINT           NOT NULL,
    updated_ms  BIGINT           NOT NULL,
    PRIMARY KEY (tenant, caller, name)
);
