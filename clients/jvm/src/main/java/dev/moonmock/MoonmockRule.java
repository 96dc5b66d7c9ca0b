package dev.moonmock;

import java.nio.file.Path;
import java.util.List;
import org.junit.rules.ExternalResource;

/**
 * JUnit 4 (Android unit tests): a server for the script, started before each test and stopped
 * after it ({@code @Rule}), or once for the class, reset before each test ({@code @ClassRule}
 * with {@link #reset()} in a {@code @Before}).
 *
 * <pre>{@code
 * @Rule public MoonmockRule moonmock = new MoonmockRule(Path.of("mocks.lua"));
 *
 * @Test public void notFound() {
 *     moonmock.client().stub("GET", "/users/7", Stub.status(404).json("{\"error\":\"gone\"}"));
 * }
 * }</pre>
 */
public class MoonmockRule extends ExternalResource {
    private final Path script;
    private final List<String> args;
    private Moonmock client;

    public MoonmockRule(Path script) { this(script, List.of()); }

    public MoonmockRule(Path script, List<String> args) {
        this.script = script;
        this.args = args;
    }

    @Override
    protected void before() { client = Moonmock.serve(script, args); }

    @Override
    protected void after() {
        if (client != null) client.close();
        client = null;
    }

    /** The running server's client. */
    public Moonmock client() {
        if (client == null) throw new IllegalStateException("moonmock: the server runs while a test does (use the rule as @Rule or @ClassRule)");
        return client;
    }

    /** Runtime rules, journal and state cleared (for a {@code @ClassRule} shared by the tests). */
    public void reset() { client().reset(); }
}
