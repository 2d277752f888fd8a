package dev.sluice.algorithm;

/**
 * {@code SLIDING_LOG}: a request at {@code t} counts while {@code now} is in {@code [t, t+W)}, that is while
 * {@code t} is in the window {@code (now−W, now]}; an entry exactly {@code W} old has expired.
 *
 * <p>Example, 3 per 60 s, admitted at 12:01:01, 12:01:10, 12:01:40: a request at 12:01:50 is rejected and told
 * to retry after 11 s, when the entry of 12:01:01 leaves the window.
 */
final class SlidingLogState extends ExpiringLogState {

    @Override
    long expiryOf(Params p, long now) {
        return now + p.window;
    }
}
