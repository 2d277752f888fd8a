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
--   here        the table; the helpers; the lock-and-write loop of one decision ({{fn}}_decide, its peeks), of one
--               give-back ({{fn}}_give_back) and of a batch of consuming requests, single and joint
--               ({{fn}}_decide_batch; {{fn}}_decide_all is one joint request of it), each written once for every
--               algorithm;
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
-- returning (allowed, remaining, reset_after, retry_after, place) as dev.sluice.spi.StoreDecision. Its switch is
-- written a second time in {{fn}}_decide_batch's single path, which calls the algorithm's function directly.
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

-- A batch of requests, each consuming (PostgresBatches: the requests that arrive while a call is in flight go
-- together in the next), decided one after the other in the order given, inside one transaction, each exactly as its
-- own call would: a single request as {{fn}}_decide taking its cost, a joint one (RateLimiter.tryAcquireAll) all or
-- nothing over its parts, each part a row of its own. The parts of every request, in order, come as arrays with the
-- parameters of {{fn}}_decide (p_nows[i] NULL: the store's clock, read once per request); per request p_sizes is its
-- number of parts, p_joints whether it is joint, p_deadlines its deadline by the store's clock (nanoseconds since the
-- epoch; NULL: none). In one statement:
--   1. lock every row of the batch in id order, so that two batches (of two instances) never wait on each other in
--      a cycle; a key with no row gets one with no state (inserted, ON CONFLICT DO NOTHING), which decides as a
--      missing row;
--   2. decide each request in turn on the rows as the requests before it left them: a request whose deadline has
--      passed by the store's clock is refused and touches nothing (a batch that reached the server late: its callers
--      have been answered by the failure policy); a joint request decides every part without taking, then, if all are
--      allowed, takes each (else counts the request where a refusing part counts rejections), as {{fn}}_decide_all
--      (the store sends one of one part that does not count rejections as its single request, which answers alike);
--   3. write each row taken from once; delete the rows step 1 created and nothing wrote; sweep near the new rows kept;
--   4. if by now the store's clock has passed the deadline of a request decided, raise: the whole batch is rolled back.
-- Returns o_now, the store's clock when the call began (the caller learns the offset of the store's clock from it);
-- o_done per request (false: refused as past its deadline); per part its decision, NULL for a refused request's.
CREATE OR REPLACE FUNCTION {{fn}}_decide_batch(
    p_algs text[], p_ids bytea[], p_namespace text, p_shapes text[], p_keys text[], p_limits bigint[],
    p_windows bigint[], p_subs bigint[], p_stricts boolean[], p_counted boolean[], p_costs bigint[],
    p_nows bigint[], p_sizes integer[], p_joints boolean[], p_deadlines bigint[], p_timeout_ms integer,
    p_async boolean,
    OUT o_now bigint, OUT o_done boolean[], OUT o_allowed boolean[], OUT o_remaining bigint[],
    OUT o_reset bigint[], OUT o_retry bigint[], OUT o_place bigint[])
LANGUAGE plpgsql AS $$
DECLARE
    c_min     CONSTANT bigint := -9223372036854775808;
    v_ids     bytea[];      -- the batch's rows, distinct, in id order
    v_first   integer[];    -- per row: its first part, for the shape and key of a new row
    v_of      integer[];    -- per part: its row's index in v_ids
    v_rows    {{table}}[];  -- per row: its state as the requests decided so far left it
    v_new     boolean[];    -- per row: created by this call
    v_dirty   boolean[];    -- per row: to be written
    v_when    bigint[];     -- per row: the time of the last request that took from it (its sweep's time)
    v_row     {{table}};
    v_blank   {{table}};    -- every column NULL: a key with no state
    v_m       integer;
    v_k       integer;
    v_i       integer;
    v_req     integer;
    v_from    integer := 1; -- the request's first part
    v_to      integer;
    v_t       bigint;
    v_now     bigint[];
    v_all     boolean;
    v_late    bigint;       -- the earliest deadline of a request decided
    r         record;
BEGIN
    o_now := {{fn}}_now();
    PERFORM {{fn}}_begin(p_timeout_ms, p_async);
    -- every answer array whole from its first element, whichever requests are refused
    o_done := array_fill(false, ARRAY[coalesce(array_length(p_sizes, 1), 0)]);
    o_allowed := array_fill(NULL::boolean, ARRAY[coalesce(array_length(p_ids, 1), 0)]);
    o_remaining := array_fill(NULL::bigint, ARRAY[coalesce(array_length(p_ids, 1), 0)]);
    o_reset := o_remaining;
    o_retry := o_remaining;
    o_place := o_remaining;
    SELECT array_agg(d.id ORDER BY d.id), array_agg(d.o ORDER BY d.id) INTO v_ids, v_first
    FROM (SELECT p.id, min(p.o)::integer AS o FROM unnest(p_ids) WITH ORDINALITY AS p(id, o) GROUP BY p.id) AS d;
    SELECT array_agg(u.k::integer ORDER BY p.o) INTO v_of
    FROM unnest(p_ids) WITH ORDINALITY AS p(id, o) JOIN unnest(v_ids) WITH ORDINALITY AS u(id, k) USING (id);
    v_m := coalesce(array_length(v_ids, 1), 0);

    -- one statement per row, by its primary key: a plan on id = ANY(...) cached while the table was small would scan it
    FOR v_k IN 1..v_m LOOP
        LOOP
            SELECT * INTO v_row FROM {{table}} WHERE id = v_ids[v_k] FOR NO KEY UPDATE;
            IF FOUND THEN
                v_rows[v_k] := v_row;
                v_new[v_k] := false;
                EXIT;
            END IF;
            INSERT INTO {{table}} (id, namespace, shape, key, expires_at)
            VALUES (v_ids[v_k], p_namespace, p_shapes[v_first[v_k]], p_keys[v_first[v_k]], c_min)
            ON CONFLICT (id) DO NOTHING;
            IF FOUND THEN
                v_rows[v_k] := v_blank;
                v_new[v_k] := true;
                EXIT;
            END IF;
        END LOOP;
    END LOOP;

    FOR v_req IN 1..coalesce(array_length(p_sizes, 1), 0) LOOP
        v_to := v_from + p_sizes[v_req] - 1;
        v_t := {{fn}}_now();
        IF p_deadlines[v_req] IS NOT NULL AND v_t >= p_deadlines[v_req] THEN
            o_done[v_req] := false;
        ELSIF NOT p_joints[v_req] THEN
            -- one part, taking its cost
            v_k := v_of[v_from];
            v_now[v_from] := coalesce(p_nows[v_from], v_t);
            -- {{fn}}_step's switch, written here as well: on this path, every single request's (each policy check of
            -- one descriptor among them), a call through {{fn}}_step would cost a function level a decision. (An
            -- algorithm missing here raises CASE_NOT_FOUND: the contract suites decide every algorithm through it.)
            CASE p_algs[v_from]
                WHEN 'fw' THEN
                    r := {{fn}}_step_fw(v_rows[v_k], p_limits[v_from], p_windows[v_from], p_subs[v_from],
                                        p_stricts[v_from], p_costs[v_from], true, p_counted[v_from], v_now[v_from]);
                WHEN 'tail' THEN
                    r := {{fn}}_step_tail(v_rows[v_k], p_limits[v_from], p_windows[v_from], p_subs[v_from],
                                          p_stricts[v_from], p_costs[v_from], true, p_counted[v_from], v_now[v_from]);
                WHEN 'tb' THEN
                    r := {{fn}}_step_tb(v_rows[v_k], p_limits[v_from], p_windows[v_from], p_subs[v_from],
                                        p_stricts[v_from], p_costs[v_from], true, p_counted[v_from], v_now[v_from]);
                WHEN 'lb' THEN
                    r := {{fn}}_step_lb(v_rows[v_k], p_limits[v_from], p_windows[v_from], p_subs[v_from],
                                        p_stricts[v_from], p_costs[v_from], true, p_counted[v_from], v_now[v_from]);
                WHEN 'log', 'swc' THEN
                    r := {{fn}}_step_log(v_rows[v_k], p_limits[v_from], p_windows[v_from], p_subs[v_from],
                                         p_stricts[v_from], p_costs[v_from], true, p_counted[v_from], v_now[v_from]);
            END CASE;
            o_allowed[v_from] := r.allowed;
            o_remaining[v_from] := r.remaining;
            o_reset[v_from] := r.reset_after;
            o_retry[v_from] := r.retry_after;
            o_place[v_from] := r.place;
            IF r.allowed OR p_counted[v_from] THEN -- taken, or counted
                v_rows[v_k] := r.s;
                v_dirty[v_k] := true;
                v_when[v_k] := v_now[v_from];
            END IF;
            o_done[v_req] := true;
        ELSE
            IF (SELECT count(DISTINCT x) FROM unnest(v_of[v_from:v_to]) AS x) <> p_sizes[v_req] THEN
                RAISE EXCEPTION 'a joint request names one row twice';
            END IF;
            v_all := true;
            FOR v_i IN v_from..v_to LOOP
                v_now[v_i] := coalesce(p_nows[v_i], v_t);
                r := {{fn}}_step(p_algs[v_i], v_rows[v_of[v_i]], p_limits[v_i], p_windows[v_i], p_subs[v_i],
                                 p_stricts[v_i], p_costs[v_i], false, p_counted[v_i], v_now[v_i]);
                o_allowed[v_i] := r.allowed;
                o_remaining[v_i] := r.remaining;
                o_reset[v_i] := r.reset_after;
                o_retry[v_i] := r.retry_after;
                o_place[v_i] := r.place;
                v_all := v_all AND r.allowed;
            END LOOP;
            FOR v_i IN v_from..v_to LOOP
                IF v_all OR (NOT o_allowed[v_i] AND p_counted[v_i]) THEN
                    v_k := v_of[v_i];
                    r := {{fn}}_step(p_algs[v_i], v_rows[v_k], p_limits[v_i], p_windows[v_i], p_subs[v_i],
                                     p_stricts[v_i], p_costs[v_i], true, p_counted[v_i], v_now[v_i]);
                    IF v_all THEN
                        o_allowed[v_i] := r.allowed;
                        o_remaining[v_i] := r.remaining;
                        o_reset[v_i] := r.reset_after;
                        o_retry[v_i] := r.retry_after;
                        o_place[v_i] := r.place;
                    END IF;
                    IF r.wrote THEN
                        v_rows[v_k] := r.s;
                        v_dirty[v_k] := true;
                        v_when[v_k] := v_now[v_i];
                    END IF;
                END IF;
            END LOOP;
            o_done[v_req] := true;
        END IF;
        IF o_done[v_req] THEN
            v_late := least(v_late, p_deadlines[v_req]);
        END IF;
        v_from := v_to + 1;
    END LOOP;

    FOR v_k IN 1..v_m LOOP
        IF v_dirty[v_k] THEN
            PERFORM {{fn}}_store(v_ids[v_k], v_rows[v_k]);
        ELSIF v_new[v_k] THEN
            DELETE FROM {{table}} WHERE id = v_ids[v_k];
            v_new[v_k] := false;
        END IF;
    END LOOP;
    -- after every write: a sweep must not delete a row of the batch before it is written
    FOR v_k IN 1..v_m LOOP
        IF v_new[v_k] THEN
            PERFORM {{fn}}_sweep(v_ids[v_k], v_when[v_k]);
        END IF;
    END LOOP;
    IF v_late IS NOT NULL AND {{fn}}_now() >= v_late THEN
        RAISE EXCEPTION 'the batch ran past the deadline of a request it decided: rolled back, nothing taken';
    END IF;
END $$;

-- A joint request alone (RateLimiter.tryAcquireAll): one request of {{fn}}_decide_batch, without a deadline. Returns
-- one row per part, in the order of the parts (part = 1..n).
CREATE OR REPLACE FUNCTION {{fn}}_decide_all(
    p_algs text[], p_ids bytea[], p_namespace text, p_shapes text[], p_keys text[], p_limits bigint[],
    p_windows bigint[], p_subs bigint[], p_stricts boolean[], p_counted boolean[], p_costs bigint[],
    p_nows bigint[], p_timeout_ms integer, p_async boolean)
RETURNS TABLE (part integer, allowed boolean, remaining bigint, reset_after bigint, retry_after bigint,
               place bigint)
LANGUAGE sql AS $$
    SELECT i, b.o_allowed[i], b.o_remaining[i], b.o_reset[i], b.o_retry[i], b.o_place[i]
    FROM {{fn}}_decide_batch(p_algs, p_ids, p_namespace, p_shapes, p_keys, p_limits, p_windows, p_subs, p_stricts,
                             p_counted, p_costs, p_nows, ARRAY[coalesce(array_length(p_ids, 1), 0)], ARRAY[true],
                             ARRAY[NULL::bigint], p_timeout_ms, p_async) AS b,
         generate_series(1, coalesce(array_length(p_ids, 1), 0)) AS i
    ORDER BY i
$$;
