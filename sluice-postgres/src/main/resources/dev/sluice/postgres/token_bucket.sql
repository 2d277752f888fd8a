-- TOKEN_BUCKET (dev.sluice.algorithm.TokenBucketState): cur + frac/W tokens, refilled continuously at L/W, full at
-- first; last is the last refill, seen the newest time seen full. A row written under a larger limit is read as full
-- under a smaller one. A reservation's place is the time it was taken; once the bucket has been seen full since, the
-- refill has given its tokens back and its cancel returns nothing. See common.sql for the parameters.

-- Time until the bucket holds p_n tokens.
CREATE OR REPLACE FUNCTION {{fn}}_tb_until(p_limit bigint, p_window bigint, p_tokens bigint, p_frac bigint, p_n bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_tokens >= p_n THEN 0
                ELSE {{fn}}_ceil_div((p_n - p_tokens)::numeric * p_window - p_frac, p_limit)::bigint END
$$;

-- Refills s up to p_now (an older time refills nothing); does not touch seen.
CREATE OR REPLACE FUNCTION {{fn}}_tb_refill(INOUT s {{table}}, p_limit bigint, p_window bigint, p_now bigint)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_grown numeric;
    v_whole bigint;
BEGIN
    IF p_now <= s.last THEN
        RETURN;
    END IF;
    IF s.cur < p_limit THEN
        IF p_now - s.last >= p_window THEN
            s.cur := p_limit;
            s.frac := 0;
        ELSE
            v_grown := (p_now - s.last)::numeric * p_limit + s.frac;
            v_whole := div(v_grown, p_window)::bigint;
            IF v_whole >= p_limit - s.cur THEN
                s.cur := p_limit;
                s.frac := 0;
            ELSE
                s.frac := mod(v_grown, p_window)::bigint;
                s.cur := s.cur + v_whole;
            END IF;
        END IF;
    END IF;
    s.last := p_now;
END $$;

CREATE OR REPLACE FUNCTION {{fn}}_tb_expires(s {{table}}, p_limit bigint, p_window bigint, p_now bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT {{fn}}_purge_at(CASE WHEN s.cur >= p_limit THEN -9223372036854775808
                                ELSE s.last + {{fn}}_tb_until(p_limit, p_window, s.cur, s.frac, p_limit) END,
                           p_now, p_window)
$$;

CREATE OR REPLACE FUNCTION {{fn}}_step_tb(
    INOUT s {{table}}, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint,
    p_take boolean, p_counted boolean, p_now bigint,
    OUT allowed boolean, OUT remaining bigint, OUT reset_after bigint, OUT retry_after bigint, OUT place bigint)
LANGUAGE plpgsql AS $$
DECLARE
    c_min CONSTANT bigint := -9223372036854775808;
BEGIN
    IF s.cur IS NULL THEN
        s.last := c_min;
        s.seen := c_min;
    END IF;
    IF s.cur IS NULL OR s.cur >= p_limit THEN
        s.cur := p_limit;
        s.frac := 0;
    END IF;
    s := {{fn}}_tb_refill(s, p_limit, p_window, p_now);
    IF s.cur >= p_limit THEN
        s.seen := s.last;
    END IF;
    allowed := s.cur >= p_cost;
    IF p_take AND (allowed OR p_counted) THEN
        IF allowed THEN
            s.cur := s.cur - p_cost;
        ELSE
            s.cur := 0;
            s.frac := 0;
        END IF;
    END IF;
    remaining := s.cur;
    reset_after := {{fn}}_tb_until(p_limit, p_window, s.cur, s.frac, p_limit);
    retry_after := CASE WHEN allowed THEN 0 ELSE {{fn}}_tb_until(p_limit, p_window, s.cur, s.frac, p_cost) END;
    place := s.last;
    s.expires_at := {{fn}}_tb_expires(s, p_limit, p_window, p_now);
END $$;

CREATE OR REPLACE FUNCTION {{fn}}_back_tb(
    INOUT s {{table}}, p_limit bigint, p_window bigint, p_sub bigint, p_strict boolean, p_cost bigint,
    p_place bigint, p_now bigint,
    OUT returned boolean)
LANGUAGE plpgsql AS $$
BEGIN
    returned := false;
    IF s.cur >= p_limit THEN
        RETURN;  -- full: a later call sees it full, at a later time, as this one would
    END IF;
    s := {{fn}}_tb_refill(s, p_limit, p_window, p_now);
    IF s.cur >= p_limit OR s.seen > p_place THEN
        RETURN;
    END IF;
    s.cur := CASE WHEN p_cost >= p_limit - s.cur THEN p_limit ELSE s.cur + p_cost END;
    IF s.cur = p_limit THEN
        s.frac := 0;
        s.seen := s.last;
    END IF;
    returned := true;
    s.expires_at := {{fn}}_tb_expires(s, p_limit, p_window, p_now);
END $$;
