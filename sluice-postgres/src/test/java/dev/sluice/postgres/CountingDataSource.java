package dev.sluice.postgres;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * A DataSource in front of another that counts the statements executed through it (each one round trip to the
 * server with PostgreSQL's driver, which sends a statement's messages and its Sync together) and keeps the SQLSTATE of
 * every statement that failed. Thread-safe.
 */
final class CountingDataSource {

    private final AtomicLong statements = new AtomicLong();
    private final List<String> failures = new CopyOnWriteArrayList<>();
    private final DataSource counted;

    CountingDataSource(DataSource target) {
        this.counted = proxy(DataSource.class, target);
    }

    /** The DataSource to give the store under test. */
    DataSource dataSource() {
        return counted;
    }

    /** Statements executed so far. */
    long statements() {
        return statements.get();
    }

    /** The SQLSTATE of every statement that failed so far, in order. */
    List<String> failures() {
        return List.copyOf(failures);
    }

    private <T> T proxy(Class<T> type, T target) {
        InvocationHandler handler = (p, method, args) -> invoke(target, method, args);
        return type.cast(
                Proxy.newProxyInstance(CountingDataSource.class.getClassLoader(), new Class<?>[] {type}, handler));
    }

    private Object invoke(Object target, Method method, Object[] args) throws Throwable {
        boolean executes = target instanceof Statement && method.getName().startsWith("execute");
        if (executes) {
            statements.incrementAndGet();
        }
        Object result;
        try {
            result = method.invoke(target, args);
        } catch (InvocationTargetException e) {
            if (executes && e.getCause() instanceof SQLException) {
                failures.add(((SQLException) e.getCause()).getSQLState());
            }
            throw e.getCause();
        }
        Class<?> returned = method.getReturnType();
        if (result != null
                && returned.isInterface()
                && (returned == Connection.class || Statement.class.isAssignableFrom(returned))) {
            return proxy(castType(returned), result);
        }
        return result;
    }

    @SuppressWarnings("unchecked")
    private static Class<Object> castType(Class<?> type) {
        return (Class<Object>) type;
    }
}
