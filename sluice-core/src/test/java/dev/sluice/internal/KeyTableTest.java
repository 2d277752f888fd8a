package dev.sluice.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * {@link KeyTable} against a map doing the same, alone and under threads: adds, removals, look-ups by equal and by
 * identical keys, keys whose hashes collide, growth and shrinking.
 */
class KeyTableTest {

    /** A state as the table sees one: a key and its hash. */
    private static final class Entry extends KeyTable.Entry {
        Entry() {}

        Entry(String key) {
            super(key);
        }
    }

    @Test
    void theLockWordCarriesTheMarksOfDecisionsUntilTheOwnerTakesThem() {
        Entry e = new Entry("k");
        e.lock();
        try {
            assertEquals(0, e.takeMarks());
            e.markUsed(false);
        } finally {
            e.unlock();
        }
        int stamp = e.optimisticStamp(false);
        e.lock();
        try {
            e.markUsed(true);
            e.markUsed(false); // a later use does not undo the change
        } finally {
            e.unlock();
        }
        assertFalse(e.validate(stamp), "a release of the lock fails the reads that overlapped it");
        e.lock();
        try {
            assertEquals(KeyTable.Entry.USED | KeyTable.Entry.CHANGED, e.takeMarks());
            assertEquals(0, e.takeMarks(), "taken once");
            assertFalse(e.retired());
        } finally {
            e.unlock();
        }
        e.lock();
        try {
            e.retire();
            e.markUsed(true);
            assertEquals(KeyTable.Entry.USED | KeyTable.Entry.CHANGED, e.takeMarks());
            assertTrue(e.retired(), "taking the marks leaves the other bits");
        } finally {
            e.unlock();
        }
    }

    @Test
    void oneReleaseInSixteenIsSampledWhateverTheMarks() {
        Entry e = new Entry("k");
        int sampled = 0;
        for (int i = 1; i <= 20 * KeyTable.Entry.SAMPLE; i++) {
            e.lock();
            e.markUsed(i % 3 == 0);
            e.noteRefused(i % 2 == 0);
            if (i % 5 == 0) {
                e.takeMarks();
            }
            int stamp = KeyTable.Entry.NO_STAMP;
            if (e.unlockSampled()) {
                sampled++;
                assertEquals(0, i % KeyTable.Entry.SAMPLE, "release " + i);
                stamp = e.optimisticStamp(false);
                assertTrue(KeyTable.Entry.sampled(stamp), "a read after a sampled release falls in its version");
            }
            if (stamp == KeyTable.Entry.NO_STAMP) {
                assertFalse(KeyTable.Entry.sampled(e.optimisticStamp(false)), "release " + i);
            }
        }
        assertEquals(20, sampled);
    }

    @Test
    void anEntryBoundToItsKeyAfterItWasBuiltIsFoundByIt() {
        KeyTable<Entry> table = new KeyTable<>();
        Entry e = new Entry();
        e.bind(new String("late"));
        assertNull(table.putIfAbsent(e));
        assertSame(e, table.get("late"), "by an equal key");
        assertSame(e, table.get(e.key()), "by the identical key");
    }

    @Test
    void behavesAsAMapOfKeysToTheFirstEntryAdded() {
        Random random = new Random(17);
        for (int run = 0; run < 20; run++) {
            KeyTable<Entry> table = new KeyTable<>();
            Map<String, Entry> model = new HashMap<>();
            int universe = 1 + random.nextInt(run < 10 ? 40 : 4_000);
            for (int op = 0; op < 20_000; op++) {
                String key = key(random.nextInt(universe));
                int kind = random.nextInt(10);
                if (kind < 4) {
                    Entry e = new Entry(key);
                    Entry held = table.putIfAbsent(e);
                    assertSame(model.get(key), held, key);
                    model.putIfAbsent(key, e);
                } else if (kind < 6) {
                    Entry held = model.get(key);
                    if (held != null) {
                        assertTrue(table.remove(held), key);
                        model.remove(key);
                    }
                    assertFalse(table.remove(new Entry(key)), "an entry that was never added: " + key);
                } else {
                    // an equal key that is not the same string: found by equals, not identity
                    assertSame(model.get(key), table.get(new String(key.toCharArray())), key);
                }
                assertEquals(model.size(), table.size());
            }
            Set<Entry> seen = new HashSet<>();
            table.forEach(seen::add);
            assertEquals(new HashSet<>(model.values()), seen);
            for (Entry e : model.values()) {
                assertSame(e, table.get(e.key()), "by identity: " + e.key());
            }
        }
    }

    @Test
    void keysWithTheSameHashAreTold() {
        // "Aa" and "BB" hash alike, and so does every string made of n of them: 2^n keys on one hash
        List<String> keys = new ArrayList<>();
        keys.add("");
        for (int n = 0; n < 8; n++) {
            List<String> longer = new ArrayList<>();
            for (String k : keys) {
                longer.add(k + "Aa");
                longer.add(k + "BB");
            }
            keys = longer;
        }
        assertEquals(1, keys.stream().mapToInt(String::hashCode).distinct().count());
        KeyTable<Entry> table = new KeyTable<>();
        Map<String, Entry> added = new HashMap<>();
        for (String k : keys) {
            Entry e = new Entry(k);
            assertNull(table.putIfAbsent(e));
            added.put(k, e);
        }
        for (int i = 0; i < keys.size(); i += 2) {
            assertTrue(table.remove(added.remove(keys.get(i))));
        }
        for (String k : keys) {
            assertSame(added.get(k), table.get(new String(k.toCharArray())), k);
        }
        assertEquals(keys.size() / 2, table.size());
    }

    @Test
    void aRemovedKeyTakesANewEntry() {
        KeyTable<Entry> table = new KeyTable<>();
        Entry first = new Entry("k");
        assertNull(table.putIfAbsent(first));
        assertTrue(table.remove(first));
        assertFalse(table.remove(first));
        assertNull(table.get("k"));
        Entry second = new Entry("k");
        assertNull(table.putIfAbsent(second));
        assertSame(second, table.get("k"));
        assertNotSame(first, table.get("k"));
    }

    /**
     * Four threads add the same 20,000 keys, each in its own order, while two more look every key up: exactly one
     * entry per key is added, every thread is answered with that one, and a reader only ever finds a key's own entry
     * (never another key's, never a second one), though the table grows under it from 16 slots to 131,072.
     */
    @Test
    void concurrentAddsAgreeOnOneEntryPerKey() throws Exception {
        int keys = 20_000;
        int adders = 4;
        KeyTable<Entry> table = new KeyTable<>();
        ExecutorService pool = Executors.newFixedThreadPool(adders + 2);
        try {
            CyclicBarrier start = new CyclicBarrier(adders + 2);
            AtomicBoolean done = new AtomicBoolean();
            List<Future<Entry[]>> added = new ArrayList<>();
            for (int t = 0; t < adders; t++) {
                int seed = t;
                added.add(pool.submit(() -> {
                    Entry[] mine = new Entry[keys];
                    int stride = new int[] {1, 7_919, 104_729, 15_485_863}[seed];
                    start.await();
                    for (int i = 0, k = 0; i < keys; i++, k = (int) ((k + (long) stride) % keys)) {
                        Entry e = new Entry(key(k));
                        Entry held = table.putIfAbsent(e);
                        mine[k] = held == null ? e : held;
                    }
                    return mine;
                }));
            }
            ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
            List<Future<?>> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                readers.add(pool.submit(() -> {
                    start.await();
                    Random random = new Random();
                    while (!done.get()) {
                        String k = key(random.nextInt(keys));
                        Entry e = table.get(new String(k.toCharArray()));
                        if (e != null && !e.key().equals(k)) {
                            wrong.add(k + " found " + e.key());
                        }
                    }
                    return null;
                }));
            }
            List<Entry[]> answers = new ArrayList<>();
            for (Future<Entry[]> f : added) {
                answers.add(f.get(2, TimeUnit.MINUTES));
            }
            done.set(true);
            for (Future<?> f : readers) {
                f.get(2, TimeUnit.MINUTES);
            }
            assertEquals(List.of(), List.copyOf(wrong));
            assertEquals(keys, table.size());
            for (int k = 0; k < keys; k++) {
                Entry held = table.get(key(k));
                assertEquals(key(k), held == null ? null : held.key());
                for (Entry[] answer : answers) {
                    assertSame(held, answer[k], key(k));
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Removers and adders at once on 2,000 keys, each thread owning its keys' removals: after every removal the key is
     * gone for every later look-up, and a key re-added is found again, through rebuilds that grow and shrink the
     * table.
     */
    @Test
    void removalsAreSeenByLaterLookUps() throws Exception {
        int threads = 4;
        int perThread = 500;
        KeyTable<Entry> table = new KeyTable<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CyclicBarrier start = new CyclicBarrier(threads);
            List<Future<?>> runs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int base = t * perThread;
                runs.add(pool.submit(() -> {
                    start.await();
                    Random random = new Random(base);
                    Entry[] held = new Entry[perThread];
                    for (int op = 0; op < 200_000; op++) {
                        int i = random.nextInt(perThread);
                        String k = key(base + i);
                        if (held[i] == null) {
                            Entry e = new Entry(k);
                            assertNull(table.putIfAbsent(e), k);
                            held[i] = e;
                            assertSame(e, table.get(k), k);
                        } else if (random.nextBoolean()) {
                            assertTrue(table.remove(held[i]), k);
                            held[i] = null;
                            assertNull(table.get(k), k);
                        } else {
                            assertSame(held[i], table.get(new String(k.toCharArray())), k);
                        }
                    }
                    for (int i = 0; i < perThread; i++) {
                        if (held[i] != null) {
                            assertTrue(table.remove(held[i]));
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : runs) {
                f.get(2, TimeUnit.MINUTES);
            }
            assertEquals(0, table.size());
            assertFalse(table.iterator().hasNext());
        } finally {
            pool.shutdownNow();
        }
    }

    private static String key(int i) {
        return "client:" + i;
    }
}
