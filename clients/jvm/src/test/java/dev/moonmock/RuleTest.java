package dev.moonmock;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Path;
import org.junit.Rule;
import org.junit.Test;

/** The JUnit 4 rule (Android unit tests): a server per test, its client from the rule. */
public class RuleTest {
    @Rule public MoonmockRule moonmock = new MoonmockRule(Path.of("src/test/resources/mocks.lua"));

    @Test
    public void aStubAndItsVerification() throws Exception {
        Moonmock mm = moonmock.client();
        mm.stub("GET", "/users/7", Stub.status(404).json("{\"error\":\"gone\"}"));
        assertEquals(404, MoonmockTest.get(mm, "/users/7").statusCode());
        assertEquals(1, mm.verify("GET", "/users/:id", Times.exactly(1)));
        assertTrue(mm.running());
    }
}
