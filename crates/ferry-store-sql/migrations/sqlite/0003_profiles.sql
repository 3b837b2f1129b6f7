-- Saved profiles (ferry-store-sql, SQLite): named form values per owner, a caller in a
-- tenant, which the forms agent fills forms from. `form_values` is a JSON object of text
-- values; `version` is the optimistic concurrency counter, 1 at creation.

CREATE TABLE profiles (
    tenant      TEXT    NOT NULL,
    caller      TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    form_values TEXT    NOT NULL,
    cards       INTEGER NOT NULL,
    version     INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL,
    PRIMARY KEY (tenant, caller, name)
) STRICT, WITHOUT ROWID;
