-- SLIDING_LOG and SLIDING_WINDOW_COUNTER (dev.sluice.algorithm.ExpiringLogState): a log of (expiry, weight) entries
-- in increasing expiry, in expiries and weights; an entry counts while now < expiry. They differ only in the expiry
-- of permits taken at now:
--   SLIDING_LOG             now + W
--   SLIDING_WINDOW_COUNTER  floor(now/S)·S + W, strict: one sub-window later
-- so both share one pair of functions, which take the expiry from p_sub: 0 for the log. See common.sql for the
-- parameters of the step and back functions.

CREATE OR REPLACE FUNCTION {{fn}}_log_expiry(p_now bigint, p_window bigint, p_sub bigint, p_strict boolean)
RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_sub = 0 THEN p_now + p_window
                ELSE {{fn}}_floor_div(p_now, p_sub) * p_sub + p_window + CASE WHEN p_strict THEN p_sub ELSE 0 END END
$$;

CREATE OR REPLACE FUNCTION {{fn}}_step_log(
    INOUT s {{table}}, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint,
    p_take boolean, p_counted boolean, p_now bigint,
    OUT allowed boolean, OUT remaining bigint, OUT reset_after bigint, OUT retry_after bigint, OUT place bigint)
LANGUAGE plpgsql AS $$
DECLARE
    c_min    CONSTANT bigint := -9223372036854775808;
    c_max    CONSTANT bigint := 9223372036854775807;
    v_e      bigint[] := s.expiries;
    v_w      bigint[] := s.weights;
    v_n      integer := coalesce(array_length(s.expiries, 1), 0);
    v_i      integer;
    v_sum    numeric;
    v_total  bigint;
    v_expiry bigint;
    v_held   bigint;
BEGIN
    -- prune the entries that have expired
    v_i := 1;
    WHILE v_i <= v_n AND v_e[v_i] <= p_now LOOP
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
    IF p_take AND (allowed OR p_counted) THEN
        v_expiry := {{fn}}_log_expiry(p_now, p_window, p_sub, p_strict);
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
    reset_after := CASE WHEN v_n = 0 THEN 0 ELSE v_e[v_n] - p_now END;
    retry_after := 0;
    IF NOT allowed THEN
        -- time until the entries hold at most L - c: the expiry of the newest entry that, with the newer ones, holds
        -- more
        v_held := 0;
        FOR v_i IN REVERSE v_n..1 LOOP
            IF v_w[v_i] > p_limit - p_cost - v_held THEN
                retry_after := v_e[v_i] - p_now;
                EXIT;
            END IF;
            v_held := v_held + v_w[v_i];
        END LOOP;
    END IF;
    place := CASE WHEN v_n = 0 THEN c_min ELSE v_e[v_n] END;
    s.expiries := v_e;
    s.weights := v_w;
    s.expires_at := {{fn}}_purge_at(place, p_now, p_window);
END $$;

CREATE OR REPLACE FUNCTION {{fn}}_back_log(
    INOUT s {{table}}, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint,
    p_place bigint, p_now bigint,
    OUT returned boolean)
LANGUAGE plpgsql AS $$
DECLARE
    c_min  CONSTANT bigint := -9223372036854775808;
    v_e    bigint[] := s.expiries;
    v_w    bigint[] := s.weights;
    v_n    integer := coalesce(array_length(s.expiries, 1), 0);
    v_i    integer;
    v_j    integer;
    v_back bigint;
BEGIN
    returned := false;
    IF p_place <= p_now THEN
        RETURN;
    END IF;
    v_i := 1;
    WHILE v_i <= v_n AND v_e[v_i] <= p_now LOOP
        v_i := v_i + 1;
    END LOOP;
    v_j := array_position(v_e, p_place, v_i);
    IF v_j IS NULL THEN
        RETURN;
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
    s.expiries := v_e;
    s.weights := v_w;
    s.expires_at := {{fn}}_purge_at(CASE WHEN v_i > v_n THEN c_min ELSE v_e[array_length(v_e, 1)] END,
                                    p_now, p_window);
    returned := v_back > 0;
END $$;
