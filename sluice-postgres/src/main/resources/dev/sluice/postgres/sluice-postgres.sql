-- Sluice: shared rate limits on PostgreSQL (exact mode). One table of per-key states and one function per algorithm
-- and operation; every decision is one call of one function, atomic per key. PostgresStore runs this script at
-- build() (createSchema) with {{table}} and {{fn}} filled in; it can as well be run by hand. Idempotent.
--
-- Times are nanoseconds since the epoch (bigint), on the time line of the limiter that wrote the row: the store's
-- clock (clock_timestamp(), microseconds) when p_now is NULL, else the limiter's clock. Products that may exceed 64
-- bits (a limit times a window) are computed in numeric, so every answer agrees with sluice-core to the nanosecond.
-- Each function mirrors one state machine of dev.sluice.algorithm line by line; read them side by side.

CREATE TABLE IF NOT EXISTS {{table}} (
    id         bytea  PRIMARY KEY,  -- SHA-256 of (namespace, state, key): fixed width, whatever the key
    namespace  text   NOT NULL,
    state      text   NOT NULL,     -- the shape of the state, e.g. tb:60000000000 (SharedStoreOptions.shape)
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

-- Inserts the row of a new key (and sweeps). Returns false if another call inserted the same key first: the caller
-- then decides again on that row, locked.
CREATE OR REPLACE FUNCTION {{fn}}_insert(p_id bytea, p_namespace text, p_state text, p_key text, p_now bigint,
                                        p_expires_at bigint, p_win bigint, p_cur bigint, p_prev bigint,
                                        p_frac bigint, p_tat bigint, p_last bigint, p_seen bigint,
                                        p_expiries bigint[], p_weights bigint[])
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {{table}} (id, namespace, state, key, expires_at, win, cur, prev, frac, tat, last, seen, expiries,
                           weights)
    VALUES (p_id, p_namespace, p_state, p_key, p_expires_at, p_win, p_cur, p_prev, p_frac, p_tat, p_last, p_seen,
            p_expiries, p_weights)
    ON CONFLICT (id) DO NOTHING;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM {{fn}}_sweep(p_id, p_now);
    RETURN true;
END $$;

-- Every decide function has the same parameters and result:
--   p_id, p_namespace, p_state, p_key   the row (the last three are written only when the row is created)
--   p_limit, p_window, p_sub            L, W and the sub-window S, in nanoseconds
--   p_strict, p_counted                 the strict sub-window counter; countRejected
--   p_cost, p_consume                   c; false for a peek
--   p_now                               the limiter's time, or NULL for the store's clock
--   p_timeout_ms, p_async               lock_timeout; commit without waiting for the WAL flush
-- returning (allowed, remaining, reset_after, retry_after, place) as dev.sluice.spi.StoreDecision.
--
-- Each reads the row without a lock first. A decision that writes nothing (a peek, a rejection not counted) is
-- answered from that read: it is linearized at its snapshot. A decision that writes reads the row again FOR NO KEY
-- UPDATE (READ COMMITTED sees the newest version once the lock is granted) and decides on that; a new key is inserted
-- (INSERT ... ON CONFLICT DO NOTHING), and a lost insert race is decided again on the winner's row, locked. So every
-- write is a read-modify-write under the row lock, inside one statement of the caller: no update is ever lost.
-- Time passing (a window advanced, a bucket refilled, entries pruned) is not written by a decision that takes
-- nothing: with time moving forward the next decision derives the same state again.

-- FIXED_WINDOW (FixedWindowState): one counter for the window [k·W, (k+1)·W).
CREATE OR REPLACE FUNCTION {{fn}}_decide_fw(
    p_id bytea, p_namespace text, p_state text, p_key text, p_limit bigint, p_window bigint, p_sub bigint,
    p_strict boolean, p_counted boolean, p_cost bigint, p_consume boolean, p_now bigint, p_timeout_ms integer,
    p_async boolean,
    OUT allowed boolean, OUT remaining bigint, OUT reset_after bigint, OUT retry_after bigint, OUT place bigint)
LANGUAGE plpgsql AS $$
DECLARE
    c_min   CONSTANT bigint := -9223372036854775808;
    v_now   bigint := coalesce(p_now, {{fn}}_now());
    v_lock  boolean := false;
    v_found boolean;
    v_win   bigint;
    v_count bigint;
    v_k     bigint;
    v_t     bigint;
    v_end   bigint;
    v_write boolean;
    v_expires bigint;
BEGIN
    LOOP
        IF v_lock THEN
            SELECT win, cur INTO v_win, v_count FROM {{table}} WHERE id = p_id FOR NO KEY UPDATE;
        ELSE
            SELECT win, cur INTO v_win, v_count FROM {{table}} WHERE id = p_id;
        END IF;
        v_found := FOUND;
        IF NOT v_found THEN
            v_win := c_min;
            v_count := 0;
        END IF;
        v_k := {{fn}}_floor_div(v_now, p_window);
        IF v_k > v_win THEN
            v_win := v_k;
            v_count := 0;
        END IF;
        v_t := greatest(v_now, v_win * p_window);
        allowed := v_count <= p_limit - p_cost;
        v_write := p_consume AND (allowed OR p_counted);
        IF v_write AND NOT v_lock THEN
            PERFORM {{fn}}_begin(p_timeout_ms, p_async);
            v_lock := true;
            IF v_found THEN
                CONTINUE;
            END IF;
        END IF;
        IF v_write THEN
            v_count := {{fn}}_sat_add(v_count, p_cost);
        END IF;
        v_end := (v_win + 1) * p_window - v_t;
        remaining := greatest(p_limit - v_count, 0);
        reset_after := CASE WHEN v_count = 0 THEN 0 ELSE v_end END;
        retry_after := CASE WHEN allowed THEN 0 ELSE v_end END;
        place := v_win;
        IF NOT v_write THEN
            RETURN;
        END IF;
        v_expires := {{fn}}_purge_at(CASE WHEN v_count = 0 THEN c_min ELSE (v_win + 1) * p_window END,
                                     v_now, p_window);
        IF v_found THEN
            UPDATE {{table}} SET expires_at = v_expires, win = v_win, cur = v_count WHERE id = p_id;
            RETURN;
        END IF;
        IF {{fn}}_insert(p_id, p_namespace, p_state, p_key, v_now, v_expires,
                v_win, v_count, NULL, NULL, NULL, NULL, NULL, NULL, NULL) THEN
            RETURN;
        END IF;
    END LOOP;
END $$;

CREATE OR REPLACE FUNCTION {{fn}}_give_back_fw(
    p_id bytea, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint, p_place bigint,
    p_now bigint, p_timeout_ms integer, p_async boolean)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    c_min   CONSTANT bigint := -9223372036854775808;
    v_now   bigint := coalesce(p_now, {{fn}}_now());
    v_win   bigint;
    v_count bigint;
    v_k     bigint;
BEGIN
    PERFORM {{fn}}_begin(p_timeout_ms, p_async);
    SELECT win, cur INTO v_win, v_count FROM {{table}} WHERE id = p_id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    v_k := {{fn}}_floor_div(v_now, p_window);
    IF v_k > v_win THEN
        v_win := v_k;
        v_count := 0;
    END IF;
    IF p_place <> v_win OR v_count = 0 THEN
        RETURN false;
    END IF;
    v_count := greatest(0, v_count - p_cost);
    UPDATE {{table}}
    SET expires_at = {{fn}}_purge_at(CASE WHEN v_count = 0 THEN c_min ELSE (v_win + 1) * p_window END,
                                     v_now, p_window),
        win = v_win, cur = v_count
    WHERE id = p_id;
    RETURN true;
END $$;

-- SLIDING_TAIL (SlidingTailState): counters of the current and the previous window; the estimate at e into the
-- current window is floor(prev·(W−e)/W) + cur.

-- The least e in [0, W] with floor(count·(W−e)/W) <= target.
CREATE OR REPLACE FUNCTION {{fn}}_tail_elapsed_when(p_window bigint, p_count bigint, p_target bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_count <= p_target THEN 0
                ELSE p_window - ({{fn}}_ceil_div((p_target::numeric + 1) * p_window, p_count) - 1)::bigint END
$$;

-- Time from p_elapsed into the current window until the estimate is at most p_target, with no further requests.
CREATE OR REPLACE FUNCTION {{fn}}_tail_until(p_window bigint, p_cur bigint, p_prev bigint, p_target bigint,
                                            p_elapsed bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_cur <= p_target
                THEN greatest(0, {{fn}}_tail_elapsed_when(p_window, p_prev, p_target - p_cur) - p_elapsed)
                ELSE p_window - p_elapsed + {{fn}}_tail_elapsed_when(p_window, p_cur, p_target) END
$$;

CREATE OR REPLACE FUNCTION {{fn}}_decide_tail(
    p_id bytea, p_namespace text, p_state text, p_key text, p_limit bigint, p_window bigint, p_sub bigint,
    p_strict boolean, p_counted boolean, p_cost bigint, p_consume boolean, p_now bigint, p_timeout_ms integer,
    p_async boolean,
    OUT allowed boolean, OUT remaining bigint, OUT reset_after bigint, OUT retry_after bigint, OUT place bigint)
LANGUAGE plpgsql AS $$
DECLARE
    c_min     CONSTANT bigint := -9223372036854775808;
    v_now     bigint := coalesce(p_now, {{fn}}_now());
    v_lock    boolean := false;
    v_found   boolean;
    v_win     bigint;
    v_cur     bigint;
    v_prev    bigint;
    v_k       bigint;
    v_elapsed bigint;
    v_write   boolean;
    v_expires bigint;
BEGIN
    LOOP
        IF v_lock THEN
            SELECT win, cur, prev INTO v_win, v_cur, v_prev FROM {{table}} WHERE id = p_id FOR NO KEY UPDATE;
        ELSE
            SELECT win, cur, prev INTO v_win, v_cur, v_prev FROM {{table}} WHERE id = p_id;
        END IF;
        v_found := FOUND;
        IF NOT v_found THEN
            v_win := c_min;
            v_cur := 0;
            v_prev := 0;
        END IF;
        v_k := {{fn}}_floor_div(v_now, p_window);
        IF v_k > v_win THEN
            v_prev := CASE WHEN v_k = v_win + 1 THEN v_cur ELSE 0 END;
            v_cur := 0;
            v_win := v_k;
        END IF;
        v_elapsed := greatest(v_now, v_win * p_window) - v_win * p_window;
        allowed := {{fn}}_sat_add(div(v_prev::numeric * (p_window - v_elapsed), p_window)::bigint, v_cur)
                   <= p_limit - p_cost;
        v_write := p_consume AND (allowed OR p_counted);
        IF v_write AND NOT v_lock THEN
            PERFORM {{fn}}_begin(p_timeout_ms, p_async);
            v_lock := true;
            IF v_found THEN
                CONTINUE;
            END IF;
        END IF;
        IF v_write THEN
            v_cur := {{fn}}_sat_add(v_cur, p_cost);
        END IF;
        remaining := greatest(p_limit
                - {{fn}}_sat_add(div(v_prev::numeric * (p_window - v_elapsed), p_window)::bigint, v_cur), 0);
        reset_after := {{fn}}_tail_until(p_window, v_cur, v_prev, 0, v_elapsed);
        retry_after := CASE WHEN allowed THEN 0
                            ELSE {{fn}}_tail_until(p_window, v_cur, v_prev, p_limit - p_cost, v_elapsed) END;
        place := v_win;
        IF NOT v_write THEN
            RETURN;
        END IF;
        v_expires := {{fn}}_purge_at(CASE WHEN v_cur > 0 THEN (v_win + 2) * p_window
                                          WHEN v_prev > 0 THEN (v_win + 1) * p_window
                                          ELSE c_min END,
                                     v_now, p_window);
        IF v_found THEN
            UPDATE {{table}} SET expires_at = v_expires, win = v_win, cur = v_cur, prev = v_prev WHERE id = p_id;
            RETURN;
        END IF;
        IF {{fn}}_insert(p_id, p_namespace, p_state, p_key, v_now, v_expires,
                v_win, v_cur, v_prev, NULL, NULL, NULL, NULL, NULL, NULL) THEN
            RETURN;
        END IF;
    END LOOP;
END $$;

CREATE OR REPLACE FUNCTION {{fn}}_give_back_tail(
    p_id bytea, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint, p_place bigint,
    p_now bigint, p_timeout_ms integer, p_async boolean)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    c_min  CONSTANT bigint := -9223372036854775808;
    v_now  bigint := coalesce(p_now, {{fn}}_now());
    v_win  bigint;
    v_cur  bigint;
    v_prev bigint;
    v_k    bigint;
BEGIN
    PERFORM {{fn}}_begin(p_timeout_ms, p_async);
    SELECT win, cur, prev INTO v_win, v_cur, v_prev FROM {{table}} WHERE id = p_id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    v_k := {{fn}}_floor_div(v_now, p_window);
    IF v_k > v_win THEN
        v_prev := CASE WHEN v_k = v_win + 1 THEN v_cur ELSE 0 END;
        v_cur := 0;
        v_win := v_k;
    END IF;
    IF p_place = v_win AND v_cur > 0 THEN
        v_cur := greatest(0, v_cur - p_cost);
    ELSIF p_place = v_win - 1 AND v_prev > 0 THEN
        v_prev := greatest(0, v_prev - p_cost);
    ELSE
        RETURN false;
    END IF;
    UPDATE {{table}}
    SET expires_at = {{fn}}_purge_at(CASE WHEN v_cur > 0 THEN (v_win + 2) * p_window
                                          WHEN v_prev > 0 THEN (v_win + 1) * p_window
                                          ELSE c_min END,
                                     v_now, p_window),
        win = v_win, cur = v_cur, prev = v_prev
    WHERE id = p_id;
    RETURN true;
END $$;

-- TOKEN_BUCKET (TokenBucketState): tokens + frac/W, refilled continuously at L/W, full at first. A row written under
-- a larger limit is read as full under a smaller one. A reservation's place is the time it was taken; once the bucket
-- has been seen full since, the refill has given its tokens back and its cancel returns nothing.

-- Time until the bucket holds p_n tokens.
CREATE OR REPLACE FUNCTION {{fn}}_tb_until(p_limit bigint, p_window bigint, p_tokens bigint, p_frac bigint, p_n bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_tokens >= p_n THEN 0
                ELSE {{fn}}_ceil_div((p_n - p_tokens)::numeric * p_window - p_frac, p_limit)::bigint END
$$;

CREATE OR REPLACE FUNCTION {{fn}}_decide_tb(
    p_id bytea, p_namespace text, p_state text, p_key text, p_limit bigint, p_window bigint, p_sub bigint,
    p_strict boolean, p_counted boolean, p_cost bigint, p_consume boolean, p_now bigint, p_timeout_ms integer,
    p_async boolean,
    OUT allowed boolean, OUT remaining bigint, OUT reset_after bigint, OUT retry_after bigint, OUT place bigint)
LANGUAGE plpgsql AS $$
DECLARE
    c_min     CONSTANT bigint := -9223372036854775808;
    v_now     bigint := coalesce(p_now, {{fn}}_now());
    v_lock    boolean := false;
    v_found   boolean;
    v_tokens  bigint;
    v_frac    bigint;
    v_last    bigint;
    v_seen    bigint;
    v_grown   numeric;
    v_whole   bigint;
    v_write   boolean;
    v_expires bigint;
BEGIN
    LOOP
        IF v_lock THEN
            SELECT cur, frac, last, seen INTO v_tokens, v_frac, v_last, v_seen
            FROM {{table}} WHERE id = p_id FOR NO KEY UPDATE;
        ELSE
            SELECT cur, frac, last, seen INTO v_tokens, v_frac, v_last, v_seen FROM {{table}} WHERE id = p_id;
        END IF;
        v_found := FOUND;
        IF NOT v_found THEN
            v_last := c_min;
            v_seen := c_min;
        END IF;
        IF NOT v_found OR v_tokens >= p_limit THEN
            v_tokens := p_limit;
            v_frac := 0;
        END IF;
        -- advance: refill up to now; an older now refills nothing
        IF v_now > v_last THEN
            IF v_tokens < p_limit THEN
                IF v_now - v_last >= p_window THEN
                    v_tokens := p_limit;
                    v_frac := 0;
                ELSE
                    v_grown := (v_now - v_last)::numeric * p_limit + v_frac;
                    v_whole := div(v_grown, p_window)::bigint;
                    IF v_whole >= p_limit - v_tokens THEN
                        v_tokens := p_limit;
                        v_frac := 0;
                    ELSE
                        v_frac := mod(v_grown, p_window)::bigint;
                        v_tokens := v_tokens + v_whole;
                    END IF;
                END IF;
            END IF;
            v_last := v_now;
        END IF;
        IF v_tokens >= p_limit THEN
            v_seen := v_last;
        END IF;
        allowed := v_tokens >= p_cost;
        v_write := p_consume AND (allowed OR p_counted);
        IF v_write AND NOT v_lock THEN
            PERFORM {{fn}}_begin(p_timeout_ms, p_async);
            v_lock := true;
            IF v_found THEN
                CONTINUE;
            END IF;
        END IF;
        IF v_write THEN
            IF allowed THEN
                v_tokens := v_tokens - p_cost;
            ELSE
                v_tokens := 0;
                v_frac := 0;
            END IF;
        END IF;
        remaining := v_tokens;
        reset_after := {{fn}}_tb_until(p_limit, p_window, v_tokens, v_frac, p_limit);
        retry_after := CASE WHEN allowed THEN 0 ELSE {{fn}}_tb_until(p_limit, p_window, v_tokens, v_frac, p_cost) END;
        place := v_last;
        IF NOT v_write THEN
            RETURN;
        END IF;
        v_expires := {{fn}}_purge_at(CASE WHEN v_tokens >= p_limit THEN c_min ELSE v_last + reset_after END,
                                     v_now, p_window);
        IF v_found THEN
            UPDATE {{table}}
            SET expires_at = v_expires, cur = v_tokens, frac = v_frac, last = v_last, seen = v_seen
            WHERE id = p_id;
            RETURN;
        END IF;
        IF {{fn}}_insert(p_id, p_namespace, p_state, p_key, v_now, v_expires,
                NULL, v_tokens, NULL, v_frac, NULL, v_last, v_seen, NULL, NULL) THEN
            RETURN;
        END IF;
    END LOOP;
END $$;

CREATE OR REPLACE FUNCTION {{fn}}_give_back_tb(
    p_id bytea, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint, p_place bigint,
    p_now bigint, p_timeout_ms integer, p_async boolean)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    c_min    CONSTANT bigint := -9223372036854775808;
    v_now    bigint := coalesce(p_now, {{fn}}_now());
    v_tokens bigint;
    v_frac   bigint;
    v_last   bigint;
    v_seen   bigint;
    v_grown  numeric;
    v_whole  bigint;
BEGIN
    PERFORM {{fn}}_begin(p_timeout_ms, p_async);
    SELECT cur, frac, last, seen INTO v_tokens, v_frac, v_last, v_seen
    FROM {{table}} WHERE id = p_id FOR NO KEY UPDATE;
    IF NOT FOUND OR v_tokens >= p_limit THEN
        RETURN false;  -- full: a later call sees it full, at a later time, as this one would
    END IF;
    IF v_now > v_last THEN
        IF v_now - v_last >= p_window THEN
            v_tokens := p_limit;
            v_frac := 0;
        ELSE
            v_grown := (v_now - v_last)::numeric * p_limit + v_frac;
            v_whole := div(v_grown, p_window)::bigint;
            IF v_whole >= p_limit - v_tokens THEN
                v_tokens := p_limit;
                v_frac := 0;
            ELSE
                v_frac := mod(v_grown, p_window)::bigint;
                v_tokens := v_tokens + v_whole;
            END IF;
        END IF;
        v_last := v_now;
    END IF;
    IF v_tokens >= p_limit OR v_seen > p_place THEN
        RETURN false;
    END IF;
    v_tokens := CASE WHEN p_cost >= p_limit - v_tokens THEN p_limit ELSE v_tokens + p_cost END;
    IF v_tokens = p_limit THEN
        v_frac := 0;
        v_seen := v_last;
    END IF;
    UPDATE {{table}}
    SET expires_at = {{fn}}_purge_at(CASE WHEN v_tokens >= p_limit THEN c_min
                                          ELSE v_last + {{fn}}_tb_until(p_limit, p_window, v_tokens, v_frac, p_limit)
                                     END,
                                     v_now, p_window),
        cur = v_tokens, frac = v_frac, last = v_last, seen = v_seen
    WHERE id = p_id;
    RETURN true;
END $$;

-- LEAKY_BUCKET (LeakyBucketState), as GCRA: the theoretical arrival time tat + frac/L, when the bucket is empty
-- (NULL-free: the smallest bigint stands for "empty"). A decision at an older time than the newest seen is decided at
-- that newest time. A reservation's place is the time it was taken; once the bucket has been seen empty since, its
-- level has leaked away and its cancel returns nothing.

CREATE OR REPLACE FUNCTION {{fn}}_decide_lb(
    p_id bytea, p_namespace text, p_state text, p_key text, p_limit bigint, p_window bigint, p_sub bigint,
    p_strict boolean, p_counted boolean, p_cost bigint, p_consume boolean, p_now bigint, p_timeout_ms integer,
    p_async boolean,
    OUT allowed boolean, OUT remaining bigint, OUT reset_after bigint, OUT retry_after bigint, OUT place bigint)
LANGUAGE plpgsql AS $$
DECLARE
    c_min       CONSTANT bigint := -9223372036854775808;
    v_time      bigint := coalesce(p_now, {{fn}}_now());
    v_now       bigint;
    v_lock      boolean := false;
    v_found     boolean;
    v_tat       bigint;
    v_frac      bigint;
    v_last      bigint;
    v_seen      bigint;
    v_inc       bigint := div(p_cost::numeric * p_window, p_limit)::bigint;
    v_inc_frac  bigint := mod(p_cost::numeric * p_window, p_limit)::bigint;
    v_next      bigint;
    v_next_frac bigint;
    v_deadline  bigint;
    v_headroom  bigint;
    v_write     boolean;
    v_expires   bigint;
BEGIN
    LOOP
        IF v_lock THEN
            SELECT tat, frac, last, seen INTO v_tat, v_frac, v_last, v_seen
            FROM {{table}} WHERE id = p_id FOR NO KEY UPDATE;
        ELSE
            SELECT tat, frac, last, seen INTO v_tat, v_frac, v_last, v_seen FROM {{table}} WHERE id = p_id;
        END IF;
        v_found := FOUND;
        IF NOT v_found THEN
            v_tat := c_min;
            v_frac := 0;
            v_last := c_min;
            v_seen := c_min;
        END IF;
        -- advance: to the newest time seen, noting an empty bucket
        v_last := greatest(v_last, v_time);
        IF v_tat < v_last OR (v_tat = v_last AND v_frac = 0) THEN
            v_tat := c_min;
            v_frac := 0;
            v_seen := v_last;
        END IF;
        v_now := v_last;
        v_next := CASE WHEN v_tat = c_min THEN v_now ELSE v_tat END + v_inc;
        IF v_inc_frac >= p_limit - v_frac THEN
            v_next := v_next + 1;
            v_next_frac := v_inc_frac - (p_limit - v_frac);
        ELSE
            v_next_frac := v_frac + v_inc_frac;
        END IF;
        v_deadline := v_now + p_window;
        allowed := v_next < v_deadline OR (v_next = v_deadline AND v_next_frac = 0);
        v_write := p_consume AND (allowed OR p_counted);
        IF v_write AND NOT v_lock THEN
            PERFORM {{fn}}_begin(p_timeout_ms, p_async);
            v_lock := true;
            IF v_found THEN
                CONTINUE;
            END IF;
        END IF;
        IF v_write THEN
            IF allowed THEN
                v_tat := v_next;
                v_frac := v_next_frac;
            ELSE
                v_tat := v_deadline;  -- full, never fuller
                v_frac := 0;
                v_next := v_deadline + v_inc;
                v_next_frac := v_inc_frac;
            END IF;
        END IF;
        IF v_tat = c_min THEN
            remaining := p_limit;
            reset_after := 0;
        ELSE
            v_headroom := v_now + p_window - v_tat;
            remaining := CASE WHEN v_headroom <= 0 THEN 0
                              ELSE div(v_headroom::numeric * p_limit - v_frac, p_window)::bigint END;
            reset_after := v_tat - v_now + CASE WHEN v_frac > 0 THEN 1 ELSE 0 END;
        END IF;
        retry_after := CASE WHEN allowed THEN 0
                            ELSE v_next - v_deadline + CASE WHEN v_next_frac > 0 THEN 1 ELSE 0 END END;
        place := v_last;
        IF NOT v_write THEN
            RETURN;
        END IF;
        v_expires := {{fn}}_purge_at(CASE WHEN v_tat = c_min THEN c_min
                                          ELSE v_tat + CASE WHEN v_frac > 0 THEN 1 ELSE 0 END END,
                                     v_now, p_window);
        IF v_found THEN
            UPDATE {{table}}
            SET expires_at = v_expires, tat = v_tat, frac = v_frac, last = v_last, seen = v_seen
            WHERE id = p_id;
            RETURN;
        END IF;
        IF {{fn}}_insert(p_id, p_namespace, p_state, p_key, v_time, v_expires,
                NULL, NULL, NULL, v_frac, v_tat, v_last, v_seen, NULL, NULL) THEN
            RETURN;
        END IF;
    END LOOP;
END $$;

CREATE OR REPLACE FUNCTION {{fn}}_give_back_lb(
    p_id bytea, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint, p_place bigint,
    p_now bigint, p_timeout_ms integer, p_async boolean)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    c_min  CONSTANT bigint := -9223372036854775808;
    v_time bigint := coalesce(p_now, {{fn}}_now());
    v_tat  bigint;
    v_frac bigint;
    v_last bigint;
    v_seen bigint;
BEGIN
    PERFORM {{fn}}_begin(p_timeout_ms, p_async);
    SELECT tat, frac, last, seen INTO v_tat, v_frac, v_last, v_seen
    FROM {{table}} WHERE id = p_id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    v_last := greatest(v_last, v_time);
    IF v_tat < v_last OR (v_tat = v_last AND v_frac = 0) THEN
        RETURN false;  -- empty: a later call sees it empty, at a later time, as this one would
    END IF;
    IF v_seen > p_place THEN
        RETURN false;
    END IF;
    v_tat := v_tat - div(p_cost::numeric * p_window, p_limit)::bigint;
    v_frac := v_frac - mod(p_cost::numeric * p_window, p_limit)::bigint;
    IF v_frac < 0 THEN
        v_tat := v_tat - 1;
        v_frac := v_frac + p_limit;
    END IF;
    IF v_tat < v_last OR (v_tat = v_last AND v_frac = 0) THEN
        v_tat := c_min;
        v_frac := 0;
        v_seen := v_last;
    END IF;
    UPDATE {{table}}
    SET expires_at = {{fn}}_purge_at(CASE WHEN v_tat = c_min THEN c_min
                                          ELSE v_tat + CASE WHEN v_frac > 0 THEN 1 ELSE 0 END END,
                                     v_last, p_window),
        tat = v_tat, frac = v_frac, last = v_last, seen = v_seen
    WHERE id = p_id;
    RETURN true;
END $$;

-- SLIDING_LOG and SLIDING_WINDOW_COUNTER (ExpiringLogState): a log of (expiry, weight) entries in increasing expiry;
-- an entry counts while now < expiry. They differ only in the expiry of permits taken at now:
--   SLIDING_LOG             now + W
--   SLIDING_WINDOW_COUNTER  floor(now/S)·S + W, strict: one sub-window later
-- so both share one function, which takes the expiry from p_sub: 0 for the log.

CREATE OR REPLACE FUNCTION {{fn}}_log_expiry(p_now bigint, p_window bigint, p_sub bigint, p_strict boolean)
RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_sub = 0 THEN p_now + p_window
                ELSE {{fn}}_floor_div(p_now, p_sub) * p_sub + p_window + CASE WHEN p_strict THEN p_sub ELSE 0 END END
$$;

CREATE OR REPLACE FUNCTION {{fn}}_decide_log(
    p_id bytea, p_namespace text, p_state text, p_key text, p_limit bigint, p_window bigint, p_sub bigint,
    p_strict boolean, p_counted boolean, p_cost bigint, p_consume boolean, p_now bigint, p_timeout_ms integer,
    p_async boolean,
    OUT allowed boolean, OUT remaining bigint, OUT reset_after bigint, OUT retry_after bigint, OUT place bigint)
LANGUAGE plpgsql AS $$
DECLARE
    c_min    CONSTANT bigint := -9223372036854775808;
    c_max    CONSTANT bigint := 9223372036854775807;
    v_now    bigint := coalesce(p_now, {{fn}}_now());
    v_lock   boolean := false;
    v_found  boolean;
    v_e      bigint[];
    v_w      bigint[];
    v_n      integer;
    v_i      integer;
    v_sum    numeric;
    v_total  bigint;
    v_expiry bigint;
    v_held   bigint;
    v_write  boolean;
    v_expires bigint;
BEGIN
    LOOP
        IF v_lock THEN
            SELECT expiries, weights INTO v_e, v_w FROM {{table}} WHERE id = p_id FOR NO KEY UPDATE;
        ELSE
            SELECT expiries, weights INTO v_e, v_w FROM {{table}} WHERE id = p_id;
        END IF;
        v_found := FOUND;
        v_n := coalesce(array_length(v_e, 1), 0);
        -- prune the entries that have expired
        v_i := 1;
        WHILE v_i <= v_n AND v_e[v_i] <= v_now LOOP
            v_i := v_i + 1;
        END LOOP;
        IF v_i > 1 THEN
            v_e := v_e[v_i:v_n];
            v_w := v_w[v_i:v_n];
            v_n := v_n - v_i + 1;
        END IF;
        v_sum := 0;
        FOR v_i IN 1..v_n LOOP
            v_sum := v_sum + v_w[v_i];
        END LOOP;
        v_total := least(v_sum, c_max)::bigint;
        allowed := v_total <= p_limit - p_cost;
        v_write := p_consume AND (allowed OR p_counted);
        IF v_write AND NOT v_lock THEN
            PERFORM {{fn}}_begin(p_timeout_ms, p_async);
            v_lock := true;
            IF v_found THEN
                CONTINUE;
            END IF;
        END IF;
        IF v_write THEN
            v_expiry := {{fn}}_log_expiry(v_now, p_window, p_sub, p_strict);
            IF v_n > 0 AND v_e[v_n] >= v_expiry THEN
                v_w[v_n] := {{fn}}_sat_add(v_w[v_n], p_cost);
            ELSE
                v_e := coalesce(v_e[1:v_n], '{}') || v_expiry;
                v_w := coalesce(v_w[1:v_n], '{}') || p_cost;
                v_n := v_n + 1;
            END IF;
            v_total := {{fn}}_sat_add(v_total, p_cost);
        END IF;
        remaining := greatest(p_limit - v_total, 0);
        reset_after := CASE WHEN v_n = 0 THEN 0 ELSE v_e[v_n] - v_now END;
        retry_after := 0;
        IF NOT allowed THEN
            -- time until the entries hold at most L - c: the expiry of the newest entry that, with the newer
            -- ones, holds more
            v_held := 0;
            FOR v_i IN REVERSE v_n..1 LOOP
                IF v_w[v_i] > p_limit - p_cost - v_held THEN
                    retry_after := v_e[v_i] - v_now;
                    EXIT;
                END IF;
                v_held := v_held + v_w[v_i];
            END LOOP;
        END IF;
        place := CASE WHEN v_n = 0 THEN c_min ELSE v_e[v_n] END;
        IF NOT v_write THEN
            RETURN;
        END IF;
        v_expires := {{fn}}_purge_at(place, v_now, p_window);
        IF v_found THEN
            UPDATE {{table}} SET expires_at = v_expires, expiries = v_e, weights = v_w WHERE id = p_id;
            RETURN;
        END IF;
        IF {{fn}}_insert(p_id, p_namespace, p_state, p_key, v_now, v_expires,
                NULL, NULL, NULL, NULL, NULL, NULL, NULL, v_e, v_w) THEN
            RETURN;
        END IF;
    END LOOP;
END $$;

CREATE OR REPLACE FUNCTION {{fn}}_give_back_log(
    p_id bytea, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint, p_place bigint,
    p_now bigint, p_timeout_ms integer, p_async boolean)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    c_min  CONSTANT bigint := -9223372036854775808;
    v_now  bigint := coalesce(p_now, {{fn}}_now());
    v_e    bigint[];
    v_w    bigint[];
    v_n    integer;
    v_i    integer;
    v_j    integer;
    v_back bigint;
BEGIN
    PERFORM {{fn}}_begin(p_timeout_ms, p_async);
    SELECT expiries, weights INTO v_e, v_w FROM {{table}} WHERE id = p_id FOR NO KEY UPDATE;
    IF NOT FOUND OR p_place <= v_now THEN
        RETURN false;
    END IF;
    v_n := coalesce(array_length(v_e, 1), 0);
    v_i := 1;
    WHILE v_i <= v_n AND v_e[v_i] <= v_now LOOP
        v_i := v_i + 1;
    END LOOP;
    v_j := array_position(v_e, p_place, v_i);
    IF v_j IS NULL THEN
        RETURN false;
    END IF;
    v_back := least(v_w[v_j], p_cost);
    v_w[v_j] := v_w[v_j] - v_back;
    -- drop the empty entries at both ends
    WHILE v_n >= v_i AND v_w[v_n] = 0 LOOP
        v_n := v_n - 1;
    END LOOP;
    WHILE v_i <= v_n AND v_w[v_i] = 0 LOOP
        v_i := v_i + 1;
    END LOOP;
    IF v_i > v_n THEN
        v_e := '{}';
        v_w := '{}';
    ELSE
        v_e := v_e[v_i:v_n];
        v_w := v_w[v_i:v_n];
    END IF;
    UPDATE {{table}}
    SET expires_at = {{fn}}_purge_at(CASE WHEN v_i > v_n THEN c_min ELSE v_e[array_length(v_e, 1)] END,
                                     v_now, p_window),
        expiries = v_e, weights = v_w
    WHERE id = p_id;
    RETURN v_back > 0;
END $$;
