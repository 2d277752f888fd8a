package dev.sluice.lease;

/**
 * What a {@link LeasedStore} has done so far; every count since it was built.
 *
 * @param rounds          background rounds ({@link LeasedStore#refresh()} calls)
 * @param storeCalls      calls to the counter store (each one round trip), failed ones included
 * @param claims          claims made on a request's thread, because the slice held was short
 * @param claimsAhead     keys given slices of frames yet to start by a round (claims ahead), counted per key and round
 * @param probeClaims     claims of limiters bound by {@link LeasedStore#bindProbe} (a health probe's), on their
 *                        requests or ahead: counted here only, not in {@code claims} or {@code claimsAhead}
 * @param permitsClaimed  permits granted to this instance by applied claims, ahead or not (a claim whose call failed
 *                        counts once a read finds it applied)
 * @param permitsReturned permits of unused slices (and cancelled reservations) written back to the store
 * @param conflicts       writes refused because another instance had written first
 * @param storeFailures   calls that failed or timed out
 * @param evictions       keys dropped from memory as idle
 * @param spans           spans granted to this instance, by a round or on a request (docs/leased-mode.md, "Spans"):
 *                        a slice of a sub-window counter good in every sub-window up to the next round
 */
public record LeaseStats(
        long rounds,
        long storeCalls,
        long claims,
        long claimsAhead,
        long probeClaims,
        long permitsClaimed,
        long permitsReturned,
        long conflicts,
        long storeFailures,
        long evictions,
        long spans) {}
