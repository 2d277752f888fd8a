-- LEAKY_BUCKET (dev.sluice.algorithm.LeakyBucketState), as GCRA: the theoretical arrival time tat + frac/L, when the
-- bucket is empty (the smallest bigint stands for "empty"); last is the newest time seen, seen the newest time seen
-- empty. A decision at an older time than the newest seen is decided at that newest time. A reservation's place is
-- the time it was taken; once the bucket has been seen empty since, its level has leaked away and its cancel returns
-- nothing. See common.sql for the parameters of the step and back functions.

CREATE OR REPLACE FUNCTION {{fn}}_lb_expires(s {{table}}, p_now bigint, p_window bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT {{fn}}_purge_at(CASE WHEN s.tat = -9223372036854775808 THEN -9223372036854775808
                                ELSE s.tat + CASE WHEN s.frac > 0 THEN 1 ELSE 0 END END,
                           p_now, p_window)
$$;

CREATE OR REPLACE FUNCTION {{fn}}_step_lb(
    INOUT s {{table}}, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint,
    p_take boolean, p_counted boolean, p_now bigint,
    OUT allowed boolean, OUT remaining bigint, OUT reset_after bigint, OUT retry_after bigint, OUT place bigint)
LANGUAGE plpgsql AS $$
DECLARE
    c_min       CONSTANT bigint := -9223372036854775808;
    v_now       bigint;
    v_inc       bigint := div(p_cost::numeric * p_window, p_limit)::bigint;
    v_inc_frac  bigint := mod(p_cost::numeric * p_window, p_limit)::bigint;
    v_next      bigint;
    v_next_frac bigint;
    v_deadline  bigint;
    v_headroom  bigint;
BEGIN
    IF s.last IS NULL THEN
        s.tat := c_min;
        s.frac := 0;
        s.last := c_min;
        s.seen := c_min;
    END IF;
    -- advance: to the newest time seen, noting an empty bucket
    s.last := greatest(s.last, p_now);
    IF s.tat < s.last OR (s.tat = s.last AND s.frac = 0) THEN
        s.tat := c_min;
        s.frac := 0;
        s.seen := s.last;
    END IF;
    v_now := s.last;
    v_next := CASE WHEN s.tat = c_min THEN v_now ELSE s.tat END + v_inc;
    IF v_inc_frac >= p_limit - s.frac THEN
        v_next := v_next + 1;
        v_next_frac := v_inc_frac - (p_limit - s.frac);
    ELSE
        v_next_frac := s.frac + v_inc_frac;
    END IF;
    v_deadline := v_now + p_window;
    allowed := v_next < v_deadline OR (v_next = v_deadline AND v_next_frac = 0);
    IF p_take AND (allowed OR p_counted) THEN
        IF allowed THEN
            s.tat := v_next;
            s.frac := v_next_frac;
        ELSE
            s.tat := v_deadline;  -- full, never fuller
            s.frac := 0;
            v_next := v_deadline + v_inc;
            v_next_frac := v_inc_frac;
        END IF;
    END IF;
    IF s.tat = c_min THEN
        remaining := p_limit;
        reset_after := 0;
    ELSE
        v_headroom := v_now + p_window - s.tat;
        remaining := CASE WHEN v_headroom <= 0 THEN 0
                          ELSE div(v_headroom::numeric * p_limit - s.frac, p_window)::bigint END;
        reset_after := s.tat - v_now + CASE WHEN s.frac > 0 THEN 1 ELSE 0 END;
    END IF;
    retry_after := CASE WHEN allowed THEN 0
                        ELSE v_next - v_deadline + CASE WHEN v_next_frac > 0 THEN 1 ELSE 0 END END;
    place := s.last;
    s.expires_at := {{fn}}_lb_expires(s, v_now, p_window);
END $$;

CREATE OR REPLACE FUNCTION {{fn}}_back_lb(
    INOUT s {{table}}, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint,
    p_place bigint, p_now bigint,
    OUT returned boolean)
LANGUAGE plpgsql AS $$
DECLARE
    c_min CONSTANT bigint := -9223372036854775808;
BEGIN
    returned := false;
    s.last := greatest(s.last, p_now);
    IF s.tat < s.last OR (s.tat = s.last AND s.frac = 0) THEN
        RETURN;  -- empty: a later call sees it empty, at a later time, as this one would
    END IF;
    IF s.seen > p_place THEN
        RETURN;
    END IF;
    s.tat := s.tat - div(p_cost::numeric * p_window, p_limit)::bigint;
    s.frac := s.frac - mod(p_cost::numeric * p_window, p_limit)::bigint;
    IF s.frac < 0 THEN
        s.tat := s.tat - 1;
        s.frac := s.frac + p_limit;
    END IF;
    IF s.tat < s.last OR (s.tat = s.last AND s.frac = 0) THEN
        s.tat := c_min;
        s.frac := 0;
        s.seen := s.last;
    END IF;
    returned := true;
    s.expires_at := {{fn}}_lb_expires(s, s.last, p_window);
END $$;
