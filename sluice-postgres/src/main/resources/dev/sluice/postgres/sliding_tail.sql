-- SLIDING_TAIL (dev.sluice.algorithm.SlidingTailState): counters of the current and the previous window, in win,
-- cur and prev; the estimate at e into the current window is floor(prev·(W−e)/W) + cur. See common.sql for the
-- parameters of the step and back functions.

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

-- When a tail state decides as a missing one's would: after the window after the last one that counts.
CREATE OR REPLACE FUNCTION {{fn}}_tail_expires(p_win bigint, p_cur bigint, p_prev bigint, p_now bigint,
                                              p_window bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT {{fn}}_purge_at(CASE WHEN p_cur > 0 THEN (p_win + 2) * p_window
                                WHEN p_prev > 0 THEN (p_win + 1) * p_window
                                ELSE -9223372036854775808 END,
                           p_now, p_window)
$$;

CREATE OR REPLACE FUNCTION {{fn}}_step_tail(
    INOUT s {{table}}, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint,
    p_take boolean, p_counted boolean, p_now bigint,
    OUT allowed boolean, OUT remaining bigint, OUT reset_after bigint, OUT retry_after bigint, OUT place bigint)
LANGUAGE plpgsql AS $$
DECLARE
    v_k       bigint := {{fn}}_floor_div(p_now, p_window);
    v_elapsed bigint;
BEGIN
    IF s.win IS NULL THEN
        s.win := v_k;
        s.cur := 0;
        s.prev := 0;
    ELSIF v_k > s.win THEN
        s.prev := CASE WHEN v_k = s.win + 1 THEN s.cur ELSE 0 END;
        s.cur := 0;
        s.win := v_k;
    END IF;
    v_elapsed := greatest(p_now, s.win * p_window) - s.win * p_window;
    allowed := {{fn}}_sat_add(div(s.prev::numeric * (p_window - v_elapsed), p_window)::bigint, s.cur)
               <= p_limit - p_cost;
    IF p_take AND (allowed OR p_counted) THEN
        s.cur := {{fn}}_sat_add(s.cur, p_cost);
    END IF;
    remaining := greatest(p_limit
            - {{fn}}_sat_add(div(s.prev::numeric * (p_window - v_elapsed), p_window)::bigint, s.cur), 0);
    reset_after := {{fn}}_tail_until(p_window, s.cur, s.prev, 0, v_elapsed);
    retry_after := CASE WHEN allowed THEN 0
                        ELSE {{fn}}_tail_until(p_window, s.cur, s.prev, p_limit - p_cost, v_elapsed) END;
    place := s.win;
    s.expires_at := {{fn}}_tail_expires(s.win, s.cur, s.prev, p_now, p_window);
END $$;

CREATE OR REPLACE FUNCTION {{fn}}_back_tail(
    INOUT s {{table}}, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint,
    p_place bigint, p_now bigint,
    OUT returned boolean)
LANGUAGE plpgsql AS $$
DECLARE
    v_k bigint := {{fn}}_floor_div(p_now, p_window);
BEGIN
    IF v_k > s.win THEN
        s.prev := CASE WHEN v_k = s.win + 1 THEN s.cur ELSE 0 END;
        s.cur := 0;
        s.win := v_k;
    END IF;
    returned := true;
    IF p_place = s.win AND s.cur > 0 THEN
        s.cur := greatest(0, s.cur - p_cost);
    ELSIF p_place = s.win - 1 AND s.prev > 0 THEN
        s.prev := greatest(0, s.prev - p_cost);
    ELSE
        returned := false;
        RETURN;
    END IF;
    s.expires_at := {{fn}}_tail_expires(s.win, s.cur, s.prev, p_now, p_window);
END $$;
