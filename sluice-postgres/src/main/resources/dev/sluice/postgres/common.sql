-- Sluice: shared rate limits on PostgreSQL (exact mode), the part every algorithm shares. One table of per-key
-- states; every decision is one call of one function, atomic per key. PostgresStore runs this script followed by one
-- script per algorithm (fixed_window.sql, sliding_tail.sql, token_bucket.sql, leaky_bucket.sql, expiring_log.sql) at
-- build() (createSchema), with {{table}} and {{fn}} filled in; the whole can as well be run by hand. Idempotent.
--
-- Times are nanoseconds since the epoch (bigint), on the time line of the limiter that wrote the row: the store's
-- clock (clock_timestamp(), microseconds) when p_now is NULL, else the limiter's clock. Products that may exceed 64
-- bits (a limit times a window) are computed in numeric, so every answer agrees with sluice-core to the nanosecond.
--
-- The layout, as the Redis store's scripts:
--   here        the table; the helpers; the lock-and-write loop of one decision ({{fn}}_decide), of one give-back
--               ({{fn}}_give_back) and of a joint request ({{fn}}_decide_all), each written once for every algorithm;
--   per script  an algorithm's state machine as two pure functions on a row, {{fn}}_step_<code> (advance to now,
--               decide, and take the cost if asked) and {{fn}}_back_<code> (give permits back), mirroring
--               dev.sluice.algorithm line by line; they read and write no table.
-- A row whose state columns are NULL is a key with no state: each step function decides it as a new key.

CREATE TABLE IF NOT EXISTS {{table}} (
    id         bytea  PRIMARY KEY,  -- SHA-256 of (namespace, shape, key): fixed width, whatever the key
    namespace  text   NOT NULL,
    shape      text   NOT NULL,     -- the shape of the state, e.g. tb:60000000000 (SharedStoreOptions.shape)
    key        text   NOT NULL,     -- the key as given, for reading only (U+0000 is shown as U+2400)
    expires_at bigint NOT NULL,     -- from then on the row may be deleted: a window after it decides as a missing one
    win        bigint,              -- FIXED_WINDOW, SLIDING_TAIL: index of the current window
    cur        bigint,              -- FIXED_WINDOW: count; SLIDING_TAIL: the current window's; TOKEN_BUCKET: tokens
    prev       bigint,              -- SLIDING_TAIL: count of the previous window
    frac       bigint,              -- TOKEN_BUCKET: fractional token (over the window); LEAKY_BUCKET: of tat (over L)
    tat        bigint,              -- LEAKY_BUCKET: theoretical arrival time, when the bucket is empty
    last       bigint,              -- TOKEN_BUCKET, LEAKY_BUCKET: the newest time seen (a bucket's last refill)
    seen       bigint,              -- TOKEN_BUCKET: the newest time seen full; LEAKY_BUCKET: seen empty
    expiries   bigint[],            -- SLIDING_LOG, SLIDING_WINDOW_COUNTER: entry expiry times, increasing
    weights    bigint[]             --   ... and the permits each entry holds
) WITH (fillfactor = 70);           -- room for HOT updates: a decision rewrites its row in place

-- A table made by an earlier version: its shape column was called state, and each algorithm had functions of its own.
DO $migrate$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_attribute
               WHERE attrelid = to_regclass('{{table}}') AND attname = 'state' AND NOT attisdropped) THEN
        ALTER TABLE {{table}} RENAME COLUMN state TO shape;
    END IF;
END $migrate$;
DROP FUNCTION IF EXISTS {{fn}}_insert(bytea, text, text, text, bigint, bigint, bigint, bigint, bigint, bigint, bigint,
                                      bigint, bigint, bigint[], bigint[]);
DROP FUNCTION IF EXISTS {{fn}}_decide_fw(bytea, text, text, text, bigint, bigint, bigint, boolean, boolean, bigint,
                                         boolean, bigint, integer, boolean);
DROP FUNCTION IF EXISTS {{fn}}_decide_tail(bytea, text, text, text, bigint, bigint, bigint, boolean, boolean, bigint,
                                           boolean, bigint, integer, boolean);
DROP FUNCTION IF EXISTS {{fn}}_decide_tb(bytea, text, text, text, bigint, bigint, bigint, boolean, boolean, bigint,
                                         boolean, bigint, integer, boolean);
DROP FUNCTION IF EXISTS {{fn}}_decide_lb(bytea, text, text, text, bigint, bigint, bigint, boolean, boolean, bigint,
                                         boolean, bigint, integer, boolean);
DROP FUNCTION IF EXISTS {{fn}}_decide_log(bytea, text, text, text, bigint, bigint, bigint, boolean, boolean, bigint,
                                          boolean, bigint, integer, boolean);
DROP FUNCTION IF EXISTS {{fn}}_give_back_fw(bytea, bigint, bigint, bigint, boolean, bigint, bigint, bigint, integer,
                                            boolean);
DROP FUNCTION IF EXISTS {{fn}}_give_back_tail(bytea, bigint, bigint, bigint, boolean, bigint, bigint, bigint, integer,
                                              boolean);
DROP FUNCTION IF EXISTS {{fn}}_give_back_tb(bytea, bigint, bigint, bigint, boolean, bigint, bigint, bigint, integer,
                                            boolean);
DROP FUNCTION IF EXISTS {{fn}}_give_back_lb(bytea, bigint, bigint, bigint, boolean, bigint, bigint, bigint, integer,
                                            boolean);
DROP FUNCTION IF EXISTS {{fn}}_give_back_log(bytea, bigint, bigint, bigint, boolean, bigint, bigint, bigint, integer,
                                             boolean);

-- The time now on the store's clock, in nanoseconds since the epoch (microsecond resolution).
CREATE OR REPLACE FUNCTION {{fn}}_now() RETURNS bigint
LANGUAGE sql VOLATILE AS $$
    SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint * 1000
$$;

-- floor(a / b) for b > 0 (bigint division truncates toward zero).
CREATE OR REPLACE FUNCTION {{fn}}_floor_div(a bigint, b bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT a / b - CASE WHEN a % b < 0 THEN 1 ELSE 0 END
$$;

-- a + b for a, b >= 0, saturating at the largest bigint.
CREATE OR REPLACE FUNCTION {{fn}}_sat_add(a bigint, b bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN a > 9223372036854775807 - b THEN 9223372036854775807 ELSE a + b END
$$;

-- When a row may be deleted: one window after its state decides as a missing row's would (p_idle; the smallest
-- bigint if it already does). The grace spares a key that comes back soon a delete and an insert, which cost far
-- more than an update; idle keys still go within two or three windows.
CREATE OR REPLACE FUNCTION {{fn}}_purge_at(p_idle bigint, p_now bigint, p_window bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT greatest(p_idle, p_now) + p_window
$$;

-- ceil(n / d) for n >= 0, d > 0.
CREATE OR REPLACE FUNCTION {{fn}}_ceil_div(n numeric, d numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
    SELECT div(n + d - 1, d)
$$;

-- Sets up the transaction of a call that writes: how long it may wait for a row lock, and whether its commit waits
-- for the WAL flush. Both last until the call's transaction ends. (Helpers written in SQL, as this one, are inlined
-- into the calling expression by the planner; none is STRICT, which would prevent that.)
CREATE OR REPLACE FUNCTION {{fn}}_begin(p_timeout_ms integer, p_async boolean) RETURNS text
LANGUAGE sql VOLATILE AS $$
    SELECT set_config('lock_timeout', p_timeout_ms || 'ms', true)
           || CASE WHEN p_async THEN set_config('synchronous_commit', 'off', true) ELSE '' END
$$;

-- Deletes the expired rows among the 4 that follow p_id in key order, skipping any that another call holds. Called
-- once per new row: ids are uniform digests, so each new key examines 4 random rows, and the expired part of the
-- table settles near a quarter of it, with no index on expires_at and nothing running in the background.
CREATE OR REPLACE FUNCTION {{fn}}_sweep(p_id bytea, p_now bigint) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM {{table}} WHERE id IN (
        SELECT id FROM {{table}}
        WHERE id IN (SELECT id FROM {{table}} WHERE id > p_id ORDER BY id LIMIT 4) AND expires_at <= p_now
        FOR UPDATE SKIP LOCKED)
$$;

-- Writes the state of s (its expiry and every state column) into the row p_id, which exists and is locked.
CREATE OR REPLACE FUNCTION {{fn}}_store(p_id bytea, s {{table}}) RETURNS void
LANGUAGE sql AS $$
    UPDATE {{table}}
    SET expires_at = s.expires_at, win = s.win, cur = s.cur, prev = s.prev, frac = s.frac, tat = s.tat,
        last = s.last, seen = s.seen, expiries = s.expiries, weights = s.weights
    WHERE id = p_id
$$;

-- Inserts the row of a new key with the state of s (and sweeps). Returns false if another call inserted the same key
-- first: the caller then decides again on that row, locked.
CREATE OR REPLACE FUNCTION {{fn}}_insert(p_id bytea, p_namespace text, p_shape text, p_key text, s {{table}},
                                        p_now bigint)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {{table}} (id, namespace, shape, key, expires_at, win, cur, prev, frac, tat, last, seen, expiries,
                           weights)
    VALUES (p_id, p_namespace, p_shape, p_key, s.expires_at, s.win, s.cur, s.prev, s.frac, s.tat, s.last, s.seen,
            s.expiries, s.weights)
    ON CONFLICT (id) DO NOTHING;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM {{fn}}_sweep(p_id, p_now);
    RETURN true;
END $$;

-- The state machine of algorithm p_alg (its code, dev.sluice.Algorithm.code()) applied to the row s at p_now:
-- advances s to p_now, decides a request of p_cost, and takes it (or, refused and p_counted, counts it) if p_take;
-- wrote says whether it did, and then s holds the state to write, expires_at included. Reads and writes no table.
--   p_limit, p_window, p_sub    L, W and the sub-window S, in nanoseconds (S is 0 but for the sub-window counter)
--   p_strict                    the strict sub-window counter
-- returning (allowed, remaining, reset_after, retry_after, place) as dev.sluice.spi.StoreDecision.
CREATE OR REPLACE FUNCTION {{fn}}_step(
    p_alg text, INOUT s {{table}}, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint,
    p_take boolean, p_counted boolean, p_now bigint,
    OUT allowed boolean, OUT remaining bigint, OUT reset_after bigint, OUT retry_after bigint, OUT place bigint,
    OUT wrote boolean)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    CASE p_alg
        WHEN 'fw' THEN
            r := {{fn}}_step_fw(s, p_limit, p_window, p_sub, p_strict, p_cost, p_take, p_counted, p_now);
        WHEN 'tail' THEN
            r := {{fn}}_step_tail(s, p_limit, p_window, p_sub, p_strict, p_cost, p_take, p_counted, p_now);
        WHEN 'tb' THEN
            r := {{fn}}_step_tb(s, p_limit, p_window, p_sub, p_strict, p_cost, p_take, p_counted, p_now);
        WHEN 'lb' THEN
            r := {{fn}}_step_lb(s, p_limit, p_window, p_sub, p_strict, p_cost, p_take, p_counted, p_now);
        WHEN 'log', 'swc' THEN
            r := {{fn}}_step_log(s, p_limit, p_window, p_sub, p_strict, p_cost, p_take, p_counted, p_now);
    END CASE;
    s := r.s;
    allowed := r.allowed;
    remaining := r.remaining;
    reset_after := r.reset_after;
    retry_after := r.retry_after;
    place := r.place;
    wrote := p_take AND (r.allowed OR p_counted);
END $$;

-- Gives back p_cost permits taken at p_place from the row s (which has state) at p_now, as far as they are still
-- held there; returned says whether any were, and then s holds the state to write. Reads and writes no table.
CREATE OR REPLACE FUNCTION {{fn}}_back(
    p_alg text, INOUT s {{table}}, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint,
    p_place bigint, p_now bigint,
    OUT returned boolean)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    CASE p_alg
        WHEN 'fw' THEN
            r := {{fn}}_back_fw(s, p_limit, p_window, p_sub, p_strict, p_cost, p_place, p_now);
        WHEN 'tail' THEN
            r := {{fn}}_back_tail(s, p_limit, p_window, p_sub, p_strict, p_cost, p_place, p_now);
        WHEN 'tb' THEN
            r := {{fn}}_back_tb(s, p_limit, p_window, p_sub, p_strict, p_cost, p_place, p_now);
        WHEN 'lb' THEN
            r := {{fn}}_back_lb(s, p_limit, p_window, p_sub, p_strict, p_cost, p_place, p_now);
        WHEN 'log', 'swc' THEN
            r := {{fn}}_back_log(s, p_limit, p_window, p_sub, p_strict, p_cost, p_place, p_now);
    END CASE;
    s := r.s;
    returned := coalesce(r.returned, false);
END $$;

-- One decision: the lock-and-write loop of every algorithm. Parameters:
--   p_alg                               the algorithm's code
--   p_id, p_namespace, p_shape, p_key   the row (the last three are written only when the row is created)
--   p_limit, p_window, p_sub, p_strict  as for {{fn}}_step
--   p_counted                           countRejected
--   p_cost, p_consume                   c; false for a peek
--   p_now                               the limiter's time, or NULL for the store's clock
--   p_timeout_ms, p_async               lock_timeout; commit without waiting for the WAL flush
-- returning (allowed, remaining, reset_after, retry_after, place) as dev.sluice.spi.StoreDecision.
--
-- It reads the row without a lock first. A decision that writes nothing (a peek, a rejection not counted) is answered
-- from that read: it is linearized at its snapshot. A decision that writes reads the row again FOR NO KEY UPDATE
-- (READ COMMITTED sees the newest version once the lock is granted) and decides on that; a new key is inserted
-- (INSERT ... ON CONFLICT DO NOTHING), and a lost insert race is decided again on the winner's row, locked. So every
-- write is a read-modify-write under the row lock, inside one statement of the caller: no update is ever lost.
-- Time passing (a window advanced, a bucket refilled, entries pruned) is not written by a decision that takes
-- nothing: with time moving forward the next decision derives the same state again.
CREATE OR REPLACE FUNCTION {{fn}}_decide(
    p_alg text, p_id bytea, p_namespace text, p_shape text, p_key text, p_limit bigint, p_window bigint,
    p_sub bigint, p_strict boolean, p_counted boolean, p_cost bigint, p_consume boolean, p_now bigint,
    p_timeout_ms integer, p_async boolean,
    OUT allowed boolean, OUT remaining bigint, OUT reset_after bigint, OUT retry_after bigint, OUT place bigint)
LANGUAGE plpgsql AS $$
DECLARE
    v_now   bigint := coalesce(p_now, {{fn}}_now());
    v_lock  boolean := false;
    v_found boolean;
    v_row   {{table}};
    r       record;
BEGIN
    LOOP
        IF v_lock THEN
            SELECT * INTO v_row FROM {{table}} WHERE id = p_id FOR NO KEY UPDATE;
        ELSE
            SELECT * INTO v_row FROM {{table}} WHERE id = p_id;
        END IF;
        v_found := FOUND;
        -- a row read without a lock is only decided on; a new key is taken at once (its insert is the lock)
        r := {{fn}}_step(p_alg, v_row, p_limit, p_window, p_sub, p_strict, p_cost,
                         p_consume AND (v_lock OR NOT v_found), p_counted, v_now);
        IF NOT r.wrote AND p_consume AND NOT v_lock AND (r.allowed OR p_counted) THEN
            PERFORM {{fn}}_begin(p_timeout_ms, p_async);
            v_lock := true;
            CONTINUE;
        END IF;
        allowed := r.allowed;
        remaining := r.remaining;
        reset_after := r.reset_after;
        retry_after := r.retry_after;
        place := r.place;
        IF NOT r.wrote THEN
            RETURN;
        END IF;
        IF v_found THEN
            PERFORM {{fn}}_store(p_id, r.s);
            RETURN;
        END IF;
        IF NOT v_lock THEN
            PERFORM {{fn}}_begin(p_timeout_ms, p_async);
            v_lock := true;
        END IF;
        IF {{fn}}_insert(p_id, p_namespace, p_shape, p_key, r.s, v_now) THEN
            RETURN;
        END IF;
    END LOOP;
END $$;

-- One cancellation: gives back p_cost permits taken at p_place, under the row lock. Returns whether any came back.
CREATE OR REPLACE FUNCTION {{fn}}_give_back(
    p_alg text, p_id bytea, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint,
    p_place bigint, p_now bigint, p_timeout_ms integer, p_async boolean)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_now bigint := coalesce(p_now, {{fn}}_now());
    v_row {{table}};
    r     record;
BEGIN
    PERFORM {{fn}}_begin(p_timeout_ms, p_async);
    SELECT * INTO v_row FROM {{table}} WHERE id = p_id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    r := {{fn}}_back(p_alg, v_row, p_limit, p_window, p_sub, p_strict, p_cost, p_place, v_now);
    IF r.returned THEN
        PERFORM {{fn}}_store(p_id, r.s);
    END IF;
    RETURN r.returned;
END $$;

-- A joint request (RateLimiter.tryAcquireAll): parts 1..n, each a row of its own (p_ids distinct), with the
-- parameters of {{fn}}_decide as arrays (p_nows[i] NULL: the store's clock, read once for the request). All or
-- nothing, in one statement:
--   1. lock every part's row in id order, so that two joint calls never wait on each other in a cycle; a key with no
--      row gets one with no state (inserted, ON CONFLICT DO NOTHING, then locked), which decides as a missing row;
--   2. decide every part without taking anything, each at its own time;
--   3. if every part is allowed, decide each again taking its cost, and answer those decisions; else take nothing,
--      but count the request where a refusing part counts rejections, and answer the decisions of step 2;
--   4. write the rows taken from; delete the rows step 1 created and nothing wrote; sweep near the new rows kept.
-- Returns one row per part, in the order of the parts (part = 1..n).
CREATE OR REPLACE FUNCTION {{fn}}_decide_all(
    p_algs text[], p_ids bytea[], p_namespace text, p_shapes text[], p_keys text[], p_limits bigint[],
    p_windows bigint[], p_subs bigint[], p_stricts boolean[], p_counted boolean[], p_costs bigint[],
    p_nows bigint[], p_timeout_ms integer, p_async boolean)
RETURNS TABLE (part integer, allowed boolean, remaining bigint, reset_after bigint, retry_after bigint,
               place bigint)
LANGUAGE plpgsql AS $$
DECLARE
    c_min     CONSTANT bigint := -9223372036854775808;
    n         CONSTANT integer := coalesce(array_length(p_ids, 1), 0);
    v_order   integer[];
    v_i       integer;
    v_row     {{table}};
    v_rows    {{table}}[];
    v_new     boolean[];
    v_store   bigint;
    v_now     bigint[];
    v_all     boolean := true;
    v_allowed boolean[];
    v_remain  bigint[];
    v_reset   bigint[];
    v_retry   bigint[];
    v_place   bigint[];
    r         record;
BEGIN
    IF (SELECT count(DISTINCT x) FROM unnest(p_ids) AS x) <> n THEN
        RAISE EXCEPTION 'a joint request names one row twice';
    END IF;
    PERFORM {{fn}}_begin(p_timeout_ms, p_async);
    SELECT array_agg(o ORDER BY p_ids[o]) INTO v_order FROM generate_series(1, n) AS o;
    FOREACH v_i IN ARRAY v_order LOOP
        LOOP
            SELECT * INTO v_row FROM {{table}} WHERE id = p_ids[v_i] FOR NO KEY UPDATE;
            IF FOUND THEN
                v_new[v_i] := false;
                EXIT;
            END IF;
            INSERT INTO {{table}} (id, namespace, shape, key, expires_at)
            VALUES (p_ids[v_i], p_namespace, p_shapes[v_i], p_keys[v_i], c_min)
            ON CONFLICT (id) DO NOTHING;
            IF FOUND THEN
                v_new[v_i] := true;  -- v_row: every column NULL, as the SELECT found nothing
                EXIT;
            END IF;
        END LOOP;
        v_rows[v_i] := v_row;
    END LOOP;

    FOR v_i IN 1..n LOOP
        IF p_nows[v_i] IS NULL AND v_store IS NULL THEN
            v_store := {{fn}}_now();
        END IF;
        v_now[v_i] := coalesce(p_nows[v_i], v_store);
        r := {{fn}}_step(p_algs[v_i], v_rows[v_i], p_limits[v_i], p_windows[v_i], p_subs[v_i], p_stricts[v_i],
                         p_costs[v_i], false, p_counted[v_i], v_now[v_i]);
        v_allowed[v_i] := r.allowed;
        v_remain[v_i] := r.remaining;
        v_reset[v_i] := r.reset_after;
        v_retry[v_i] := r.retry_after;
        v_place[v_i] := r.place;
        v_all := v_all AND r.allowed;
    END LOOP;

    FOR v_i IN 1..n LOOP
        IF v_all OR (NOT v_allowed[v_i] AND p_counted[v_i]) THEN
            r := {{fn}}_step(p_algs[v_i], v_rows[v_i], p_limits[v_i], p_windows[v_i], p_subs[v_i], p_stricts[v_i],
                             p_costs[v_i], true, p_counted[v_i], v_now[v_i]);
            IF v_all THEN
                v_allowed[v_i] := r.allowed;
                v_remain[v_i] := r.remaining;
                v_reset[v_i] := r.reset_after;
                v_retry[v_i] := r.retry_after;
                v_place[v_i] := r.place;
            END IF;
            PERFORM {{fn}}_store(p_ids[v_i], r.s);
        ELSIF v_new[v_i] THEN
            DELETE FROM {{table}} WHERE id = p_ids[v_i];
            v_new[v_i] := false;
        END IF;
    END LOOP;
    -- after every write: a sweep must not delete a part's row before it is written
    FOR v_i IN 1..n LOOP
        IF v_new[v_i] THEN
            PERFORM {{fn}}_sweep(p_ids[v_i], v_now[v_i]);
        END IF;
    END LOOP;

    FOR v_i IN 1..n LOOP
        part := v_i;
        allowed := v_allowed[v_i];
        remaining := v_remain[v_i];
        reset_after := v_reset[v_i];
        retry_after := v_retry[v_i];
        place := v_place[v_i];
        RETURN NEXT;
    END LOOP;
END $$;
