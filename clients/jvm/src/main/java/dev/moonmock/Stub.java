package dev.moonmock;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a stub answers: {@code Stub.status(404).json("{\"error\":\"gone\"}")},
 * {@code Stub.ok().text("pong").header("X-Kind", "stub").delay(200)}.
 */
public final class Stub {
    final Map<String, Object> respond = new LinkedHashMap<>();
    final Map<String, Object> match = new LinkedHashMap<>();

    private Stub(int status) { respond.put("status", status); }

    public static Stub status(int status) { return new Stub(status); }
    /** A 200, its body still to give. */
    public static Stub ok() { return status(200); }

    /** The body: JSON text (checked here: a {@link IllegalArgumentException} when it is not JSON). */
    public Stub json(String jsonText) { respond.put("json", Json.parse(jsonText)); return this; }
    public Stub text(String text) { respond.put("text", text); return this; }
    @SuppressWarnings("unchecked")
    public Stub header(String name, String value) {
        ((Map<String, Object>) respond.computeIfAbsent("headers", k -> new LinkedHashMap<String, Object>())).put(name, value);
        return this;
    }
    /** Milliseconds before the answer. */
    public Stub delay(long milliseconds) { respond.put("delay", milliseconds); return this; }
    /** {@code connection_reset}, {@code empty_response}, {@code malformed_chunk}, {@code timeout}. */
    public Stub fault(String fault) { respond.put("fault", fault); return this; }
    /** Retired after this many answers. */
    public Stub times(int times) { match.put("times", times); return this; }
    public Stub named(String name) { match.put("name", name); return this; }
    /** A query parameter the request must carry with this value. */
    @SuppressWarnings("unchecked")
    public Stub query(String name, String value) {
        ((Map<String, Object>) match.computeIfAbsent("query", k -> new LinkedHashMap<String, Object>())).put(name, value);
        return this;
    }
    /** A request header it must carry with this value. */
    @SuppressWarnings("unchecked")
    public Stub matchHeader(String name, String value) {
        ((Map<String, Object>) match.computeIfAbsent("headers", k -> new LinkedHashMap<String, Object>())).put(name, value);
        return this;
    }
}
