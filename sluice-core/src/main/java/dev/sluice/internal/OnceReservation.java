package dev.sluice.internal;

import dev.sluice.Decision;
import dev.sluice.Reservation;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * The base of every limiter's {@link Reservation}: its key, cost and decision, and a {@link #cancel()} that gives
 * the permits back at most once however many threads call it. Each of core's limiters
 * subclasses it privately to say where the permits were taken from and how to return them.
 *
 * <p>Thread-safe once published: {@link #decide} is called once, by the limiter's {@code reserve}, before the
 * reservation is handed out.
 */
public abstract class OnceReservation implements Reservation {

    /** The key the permits were requested on. */
    public final String key;
    /** The permits requested. */
    public final long cost;

    private @Nullable Decision decision;
    private final AtomicBoolean done = new AtomicBoolean();

    /** A reservation of {@code cost} permits of {@code key}, not yet decided. */
    protected OnceReservation(String key, long cost) {
        this.key = key;
        this.cost = cost;
    }

    /** Records the decision; once, before the reservation is published. */
    public final void decide(Decision d) {
        decision = d;
    }

    @Override
    public final Decision decision() {
        return Objects.requireNonNull(decision, "a reservation is decided before it is published");
    }

    /**
     * Whether there are permits to give back. By default whether the decision admitted the request; a limiter whose
     * admissions do not all hold permits (a fail-open answer) says so here.
     */
    protected boolean holds() {
        return decision().allowed();
    }

    /** Gives the permits back; called at most once, and only if {@link #holds()}. Whether they were returned. */
    protected abstract boolean giveBack();

    @Override
    public final boolean cancel() {
        if (!holds() || !done.compareAndSet(false, true)) {
            return false;
        }
        return giveBack();
    }

    @Override
    public String toString() {
        return "Reservation[" + key + ", cost=" + cost + ", " + decision + (done.get() ? ", cancelled" : "") + "]";
    }
}
