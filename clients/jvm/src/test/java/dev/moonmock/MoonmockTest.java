package dev.moonmock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The JVM client against the real binary (MOONMOCK_BIN). */
class MoonmockTest {
    static final Path SCRIPT = Path.of(System.getProperty("moonmock.script", "src/test/resources/mocks.lua"));
    static final HttpClient HTTP = HttpClient.newHttpClient();

    static HttpResponse<String> get(Moonmock mm, String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(mm.url() + path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void chaosForAWhileAndResources() throws Exception {
        try (Moonmock mm = Moonmock.serve(SCRIPT)) {
            assertEquals(200, get(mm, "/users/7").statusCode());
            Map<String, Object> on = mm.chaos("down", 60_000L);
            assertEquals("down", ((Map<?, ?>) on.get("runtime")).get("profile"));
            assertEquals(503, get(mm, "/users/7").statusCode());
            mm.chaos("down", 200L);   // in its place, over soon
            Thread.sleep(1500);
            assertEquals(200, get(mm, "/users/7").statusCode());
            mm.chaos(Map.of("error_rate", 1, "status", 418), null);
            assertEquals(418, get(mm, "/users/7").statusCode());
            assertEquals(false, mm.stopChaos().get("active"));
            assertEquals(200, get(mm, "/users/7").statusCode());
            assertThrows(MoonmockException.class, () -> mm.chaos("nope"));
            List<Map<String, Object>> resources = mm.resources();
            assertEquals("/todos", resources.get(0).get("path"));
            assertEquals(List.of(Map.of("id", 1L, "title", "seeded")), resources.get(0).get("items"));
            mm.resetResource("/todos");
            assertEquals("[{\"id\":1,\"title\":\"seeded\"}]", get(mm, "/todos").body());
        }
    }

    @Test
    void stubVerifyRequestsAndClose() throws Exception {
        Process process;
        try (Moonmock mm = Moonmock.serve(SCRIPT)) {
            process = mm.process();
            assertTrue(mm.url().toString().matches("http://127\\.0\\.0\\.1:\\d+"));
            String id = mm.stub("GET", "/orders/:id", Stub.status(201).json("{\"id\":\"o-1\"}").header("X-Kind", "stub"));
            HttpResponse<String> answer = get(mm, "/orders/1");
            assertEquals(201, answer.statusCode());
            assertEquals("{\"id\":\"o-1\"}", answer.body());
            assertEquals("stub", answer.headers().firstValue("x-kind").orElse(""));
            assertTrue(mm.rules().stream().anyMatch(r -> id.equals(r.get("id"))));
            assertEquals(1, mm.verify("GET", "/orders/:id", Times.exactly(1)));
            get(mm, "/userz/3");
            AssertionError failed = assertThrows(AssertionError.class, () -> mm.verify("GET", "/users/:id", Times.exactly(1)));
            assertTrue(failed.getMessage().contains("closest: GET " + mm.url() + "/userz/3: path: expected /users/:id, got /userz/3"), failed.getMessage());
            List<Map<String, Object>> all = mm.requests();
            long last = ((Number) all.get(all.size() - 1).get("id")).longValue();
            get(mm, "/users/7");
            assertEquals(List.of(mm.url() + "/users/7"), mm.requests(last).stream().map(e -> e.get("url")).toList());
            assertEquals(1, mm.verifyRule("user", Times.atLeast(1)));
            mm.removeRule(id);
            assertEquals(404, get(mm, "/orders/1").statusCode());
        }
        assertFalse(process.isAlive(), "the server is left running");
    }

    @Test
    void stateSwitchResetHealth() throws Exception {
        try (Moonmock mm = Moonmock.serve(SCRIPT)) {
            mm.state().put("user", "ana");
            assertEquals("ana", mm.state().get("user"));
            assertNull(mm.state().get("nobody"));
            mm.state().replace(Map.of("hits", 41));
            assertEquals("{\"n\":42}", get(mm, "/count").body());
            assertTrue(mm.state().remove("hits"));
            mm.switchVariant("GET /weather", "storm");
            assertEquals(503, get(mm, "/weather").statusCode());
            mm.stub("GET", "/extra", Stub.ok().text("x"));
            mm.reset();
            assertEquals(List.of(), mm.requests());
            assertEquals(200, get(mm, "/weather").statusCode());
            assertEquals(404, get(mm, "/extra").statusCode());
            assertFalse(Boolean.FALSE.equals(mm.health().get("ok")));
            Moonmock again = Moonmock.connect(mm.url());
            assertEquals(mm.rules().size(), again.rules().size());
        }
    }

    @Test
    void aRefusedRuleNamesItsField() {
        try (Moonmock mm = Moonmock.serve(SCRIPT)) {
            RuleException refused = assertThrows(RuleException.class, () -> mm.stub("GET", "/a", Stub.status(99)));
            assertEquals("rule.respond.status", refused.field());
            assertEquals(400, refused.status());
            assertTrue(refused.getMessage().contains("rule.respond.status"), refused.getMessage());
            MoonmockException missing = assertThrows(MoonmockException.class, () -> mm.removeRule("no-such-rule"));
            assertEquals(404, missing.status());
        }
    }

    @Test
    void noProcessLeftWhenTheTestThrows() {
        Process[] process = new Process[1];
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> {
            try (Moonmock mm = Moonmock.serve(SCRIPT)) {
                process[0] = mm.process();
                throw new IllegalStateException("the test failed");
            }
        });
        assertEquals("the test failed", thrown.getMessage());
        assertFalse(process[0].isAlive());
    }

    @Test
    void jsonRoundTrips() {
        Object value = Json.parse("{\"a\": [1, 2.5, \"x\\u00e9\\n\", true, null], \"b\": {}}");
        assertEquals("{\"a\":[1,2.5,\"xé\\n\",true,null],\"b\":{}}", Json.write(value));
        assertThrows(IllegalArgumentException.class, () -> Json.parse("{\"a\": }"));
    }

    @Test
    void contractSummaryAndCleanCheck() throws Exception {
        Path contract = Path.of(System.getProperty("moonmock.fixtures", "../../Tests/Fixtures/contract")).toAbsolutePath();
        try (Moonmock mm = Moonmock.serve(contract.resolve("mocks.lua"))) {
            assertEquals(200, get(mm, "/v1/pets").statusCode());
            mm.assertContractClean();
            assertEquals(200, get(mm, "/v1/pets?broken=1").statusCode());
            assertEquals(1, ((Number) mm.contract().get("violations")).intValue());
            AssertionError error = assertThrows(AssertionError.class, mm::assertContractClean);
            assertTrue(error.getMessage().contains("listPets response: /body/0/name"), error.getMessage());
        }
    }
}
