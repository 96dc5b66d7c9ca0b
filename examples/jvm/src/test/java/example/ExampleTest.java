package example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.moonmock.Moonmock;
import dev.moonmock.MoonmockExtension;
import dev.moonmock.MoonmockScript;
import dev.moonmock.Stub;
import dev.moonmock.Times;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** An Android or JVM team's tests against the same ../mocks.lua the iOS, web and Python teams use. */
@ExtendWith(MoonmockExtension.class)
@MoonmockScript("../mocks.lua")
class ExampleTest {
    static final HttpClient HTTP = HttpClient.newHttpClient();

    static HttpResponse<String> get(Moonmock mm, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(mm.url() + path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theScriptAnswers(Moonmock mm) throws Exception {
        assertEquals("{\"id\":7,\"name\":\"User 7\"}", get(mm, "/users/7").body());
    }

    @Test
    void aStubForThisTestOnly(Moonmock mm) throws Exception {
        mm.stub("GET", "/users/7", Stub.status(404).json("{\"error\":\"no such user\"}"));
        assertEquals(404, get(mm, "/users/7").statusCode());
        mm.verify("GET", "/users/:id", Times.exactly(1));
    }

    @Test
    void failsTwiceThenSucceeds(Moonmock mm) throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 3; i++) statuses.add(get(mm, "/flaky").statusCode());
        assertEquals(List.of(503, 503, 200), statuses);
    }
}
