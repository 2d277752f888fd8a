-- FIXED_WINDOW (dev.sluice.algorithm.FixedWindowState): one counter for the window [k·W, (k+1)·W), in win and cur.
-- No state: no window yet. See common.sql for the parameters of the step and back functions.

CREATE OR REPLACE FUNCTION {{fn}}_step_fw(
    INOUT s {{table}}, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint,
    p_take boolean, p_counted boolean, p_now bigint,
    OUT allowed boolean, OUT remaining bigint, OUT reset_after bigint, OUT retry_after bigint, OUT place bigint)
LANGUAGE plpgsql AS $$
DECLARE
    c_min CONSTANT bigint := -9223372036854775808;
    v_k   bigint := {{fn}}_floor_div(p_now, p_window);
    v_end bigint;
BEGIN
    IF s.win IS NULL OR v_k > s.win THEN
        s.win := v_k;
        s.cur := 0;
    END IF;
    allowed := s.cur <= p_limit - p_cost;
    IF p_take AND (allowed OR p_counted) THEN
        s.cur := {{fn}}_sat_add(s.cur, p_cost);
    END IF;
    v_end := (s.win + 1) * p_window - greatest(p_now, s.win * p_window);
    remaining := greatest(p_limit - s.cur, 0);
    reset_after := CASE WHEN s.cur = 0 THEN 0 ELSE v_end END;
    retry_after := CASE WHEN allowed THEN 0 ELSE v_end END;
    place := s.win;
    s.expires_at := {{fn}}_purge_at(CASE WHEN s.cur = 0 THEN c_min ELSE (s.win + 1) * p_window END,
                                    p_now, p_window);
END $$;

CREATE OR REPLACE FUNCTION {{fn}}_back_fw(
    INOUT s {{table}}, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint,
    p_place bigint, p_now bigint,
    OUT returned boolean)
LANGUAGE plpgsql AS $$
DECLARE
    c_min CONSTANT bigint := -9223372036854775808;
    v_k   bigint := {{fn}}_floor_div(p_now, p_window);
BEGIN
    IF v_k > s.win THEN
        s.win := v_k;
        s.cur := 0;
    END IF;
    returned := p_place = s.win AND s.cur > 0;
    IF NOT returned THEN
        RETURN;
    END IF;
    s.cur := greatest(0, s.cur - p_cost);
    s.expires_at := {{fn}}_purge_at(CASE WHEN s.cur = 0 THEN c_min ELSE (s.win + 1) * p_window END,
                                    p_now, p_window);
END $$;
