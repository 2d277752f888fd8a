package dev.sluice.internal;

import dev.sluice.Acquisition;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.Reservation;
import java.util.ArrayList;
import java.util.List;

/** {@link JointDecider#takeAndGiveBack()}: reserve in order, cancel on the first refusal. */
final class TakeAndGiveBack implements JointDecider {

    static final TakeAndGiveBack INSTANCE = new TakeAndGiveBack();

    private TakeAndGiveBack() {}

    @Override
    public JointDecision decideAll(List<Acquisition> parts) {
        List<Reservation> taken = new ArrayList<>(parts.size());
        for (Acquisition a : parts) {
            Reservation r;
            try {
                r = a.limiter().reserve(a.key(), a.cost());
            } catch (RuntimeException e) { // a closed limiter, a store failure under FailurePolicy.THROW
                cancel(taken);
                throw e;
            }
            if (!r.decision().allowed()) {
                return refused(parts, taken, r.decision());
            }
            taken.add(r);
        }
        List<Decision> decisions = new ArrayList<>(taken.size());
        for (Reservation r : taken) {
            decisions.add(r.decision());
        }
        return JointDecision.of(decisions);
    }

    private static void cancel(List<Reservation> taken) {
        for (int i = taken.size() - 1; i >= 0; i--) {
            taken.get(i).cancel();
        }
    }

    private static JointDecision refused(List<Acquisition> parts, List<Reservation> taken, Decision refusal) {
        cancel(taken);
        int refusedAt = taken.size();
        List<Decision> decisions = new ArrayList<>(parts.size());
        for (int i = 0; i < parts.size(); i++) {
            Acquisition a = parts.get(i);
            if (i == refusedAt) {
                decisions.add(refusal);
                continue;
            }
            Decision d = a.limiter().peek(a.key(), a.cost());
            if (i > refusedAt && !d.allowed() && a.limiter().config().countRejected()) {
                Reservation counted = a.limiter().reserve(a.key(), a.cost()); // refused here too: counted, as alone
                if (counted.decision().allowed()) {
                    counted.cancel(); // room came back since the peek: the request is refused all the same
                } else {
                    d = counted.decision();
                }
            }
            decisions.add(d);
        }
        return JointDecision.of(decisions);
    }

    @Override
    public String toString() {
        return "JointDecider.takeAndGiveBack()";
    }
}
