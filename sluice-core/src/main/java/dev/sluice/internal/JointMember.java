package dev.sluice.internal;

/**
 * A limiter that names the decider of its joint requests ({@link dev.sluice.RateLimiter#tryAcquireAll}): every limiter
 * of core's stores. A joint request whose limiters all name equal deciders is decided by that decider, in one step;
 * any other, and any request over a limiter that is no member (an application's own {@code RateLimiter}), by
 * {@link JointDecider#takeAndGiveBack()}.
 */
public interface JointMember {

    /** The decider of joint requests on this limiter's store: the same for every limiter the store binds. */
    JointDecider jointDecider();
}
