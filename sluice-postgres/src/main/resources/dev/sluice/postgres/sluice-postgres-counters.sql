-- Sluice: the counter store of synchronized mode on PostgreSQL. One table of records (counts per frame and a version)
-- and one function that compare-and-sets a batch of them. PostgresStore.counterStoreBuilder(...).build() runs this
-- script (createSchema) with {{table}} and {{fn}} filled in; it can as well be run by hand. Idempotent.
--
-- A batch is read by one plain statement (SELECT ... WHERE id = ANY(ids)) and written by one call of {{fn}}_cas: one
-- round trip each, whatever the number of records. Times are nanoseconds since the epoch (bigint).

CREATE TABLE IF NOT EXISTS {{table}} (
    id         bytea    PRIMARY KEY,  -- SHA-256 of (shape, key): fixed width, whatever the key
    shape      text     NOT NULL,     -- the shape of the counters, e.g. tail:60000000000 (CounterKey.shape)
    key        text     NOT NULL,     -- the key as given, for reading only (U+0000 is shown as U+2400)
    version    bigint   NOT NULL CHECK (version <> 0),  -- set by every write, at random; 0 means "no record"
    frames     bigint[] NOT NULL,     -- frame starts, increasing
    counts     bigint[] NOT NULL,     -- the count of each frame, positive
    expires_at bigint   NOT NULL      -- no frame counts from then on; the row is deleted a minute later at the earliest
) WITH (fillfactor = 70);             -- room for HOT updates: a write rewrites its row in place

-- Applies each write of a batch whose expected version is the row's version (0: whose row does not exist), and no
-- other; returns the positions (from 1) of the writes applied. The writes come as parallel arrays, one element per
-- write; the counts of write i are p_frames and p_counts from p_offsets[i] + 1, p_sizes[i] of them.
--
-- Four statements, in this order, so that concurrent calls always take row locks in one order and never deadlock:
--   1. lock the batch's existing rows, in id order;
--   2. insert the new records (the writes that expect none), in id order; one that meets an existing row, or one
--      inserted by a concurrent call, is not applied (ON CONFLICT DO NOTHING waits for that call to end first);
--   3. update the rows whose version is the one expected: all locked in step 1, so this waits for nothing;
--   4. sweep: delete the rows among the 4 that follow each new row that expired over a minute ago (by the
--      database's clock: the minute covers a database clock ahead of the instances'), skipping rows locked by anyone.
-- A call waits only in steps 1 and 2, and in each only for rows of a greater id than any it has written. At READ
-- COMMITTED a lock granted after a wait returns the row's newest version, so of two calls expecting the same version
-- of a row exactly one applies its write; the other sees the new version and is not applied.
CREATE OR REPLACE FUNCTION {{fn}}_cas(
    p_ids bytea[], p_spaces text[], p_keys text[], p_expected bigint[], p_versions bigint[], p_expires bigint[],
    p_offsets integer[], p_sizes integer[], p_frames bigint[], p_counts bigint[], p_timeout_ms integer)
RETURNS integer[]
LANGUAGE plpgsql AS $$
DECLARE
    v_now     bigint := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint * 1000;
    v_created integer[];
    v_updated integer[];
    v_new     bytea[];
BEGIN
    PERFORM set_config('lock_timeout', p_timeout_ms || 'ms', true);

    PERFORM 1 FROM {{table}} WHERE id = ANY(p_ids) ORDER BY id FOR NO KEY UPDATE;

    WITH w AS (
        SELECT * FROM unnest(p_ids, p_spaces, p_keys, p_expected, p_versions, p_expires, p_offsets, p_sizes)
            WITH ORDINALITY AS w(id, shape, key, expected, version, expires_at, off, size, pos)
    ), created AS (
        INSERT INTO {{table}} (id, shape, key, version, frames, counts, expires_at)
        SELECT w.id, w.shape, w.key, w.version, p_frames[w.off + 1 : w.off + w.size],
               p_counts[w.off + 1 : w.off + w.size], w.expires_at
        FROM w WHERE w.expected = 0 ORDER BY w.id
        ON CONFLICT (id) DO NOTHING
        RETURNING id
    )
    SELECT array_agg(w.pos::integer), array_agg(w.id) INTO v_created, v_new FROM created JOIN w USING (id);

    WITH w AS (
        SELECT * FROM unnest(p_ids, p_expected, p_versions, p_expires, p_offsets, p_sizes)
            WITH ORDINALITY AS w(id, expected, version, expires_at, off, size, pos)
    ), updated AS (
        UPDATE {{table}} t
        SET version = w.version, frames = p_frames[w.off + 1 : w.off + w.size],
            counts = p_counts[w.off + 1 : w.off + w.size], expires_at = w.expires_at
        FROM w WHERE t.id = w.id AND w.expected <> 0 AND t.version = w.expected
        RETURNING w.pos::integer AS pos
    )
    SELECT array_agg(pos) INTO v_updated FROM updated;

    IF v_new IS NOT NULL THEN
        DELETE FROM {{table}} WHERE id IN (
            SELECT id FROM {{table}}
            WHERE id IN (SELECT f.id FROM unnest(v_new) AS n(id),
                                LATERAL (SELECT x.id FROM {{table}} x WHERE x.id > n.id ORDER BY x.id LIMIT 4) f)
              AND id <> ALL (p_ids) AND expires_at <= v_now - 60000000000
            FOR UPDATE SKIP LOCKED);
    END IF;

    RETURN coalesce(v_created, '{}') || coalesce(v_updated, '{}');
END $$;
