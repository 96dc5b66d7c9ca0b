package dev.moonmock;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Moonmock server for a JVM test: started by {@link #serve(Path)} (and stopped by
 * {@link #close()}), or one started elsewhere reached with {@link #connect(URI)}; its admin API
 * with the Python client's calls.
 *
 * <pre>{@code
 * try (Moonmock mm = Moonmock.serve(Path.of("mocks.lua"))) {
 *     mm.stub("GET", "/users/7", Stub.status(404).json("{\"error\":\"gone\"}"));
 *     // ... the code under test calls mm.url() + "/users/7" ...
 *     mm.verify("GET", "/users/:id", Times.exactly(1));
 * }
 * }</pre>
 */
public final class Moonmock implements AutoCloseable {
    private static final Pattern SERVING = Pattern.compile(" on (https?://\\S+)$");

    private final URI url;
    private final String token;
    private final Process process;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final State state = new State();

    private Moonmock(URI url, String token, Process process) {
        this.url = URI.create(url.toString().replaceAll("/+$", ""));
        this.token = token;
        this.process = process;
    }

    /** A server started elsewhere ({@code http://127.0.0.1:8080}). */
    public static Moonmock connect(URI url) { return new Moonmock(url, null, null); }

    /** A server started elsewhere, with the admin token it was given. */
    public static Moonmock connect(URI url, String token) { return new Moonmock(url, token, null); }

    /** {@code moonmock serve script} on a free port of 127.0.0.1, once it answers. */
    public static Moonmock serve(Path script) { return serve(script, List.of()); }

    /** {@link #serve(Path)} with more arguments for {@code moonmock serve} ({@code --cors}, ...). */
    public static Moonmock serve(Path script, List<String> args) { return serve(script, args, null); }

    /** {@link #serve(Path, List)} with the binary given (else {@code MOONMOCK_BIN}, else {@code PATH}). */
    public static Moonmock serve(Path script, List<String> args, Path binary) {
        List<String> command = new ArrayList<>();
        command.add(findBinary(binary).toString());
        command.add("serve");
        if (script != null) command.add(script.toAbsolutePath().toString());
        command.addAll(List.of("--port", "0", "--no-watch"));
        command.addAll(args);
        Process process;
        try {
            process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            throw new IllegalStateException("moonmock: cannot start " + command, e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> address = CompletableFuture.supplyAsync(() -> {
            try {
                String line;
                while ((line = out.readLine()) != null) {
                    Matcher m = SERVING.matcher(line.trim());
                    if (m.find()) {
                        Thread drain = new Thread(() -> { try { while (out.readLine() != null) { } } catch (IOException ignored) { } });
                        drain.setDaemon(true);
                        drain.start();
                        return m.group(1);
                    }
                }
            } catch (IOException ignored) { }
            return null;
        });
        String found;
        try {
            found = address.get(20, TimeUnit.SECONDS);
        } catch (Exception e) {
            process.destroyForcibly();
            throw new IllegalStateException("moonmock did not start serving within 20 s: " + command, e);
        }
        if (found == null) {
            process.destroyForcibly();
            throw new IllegalStateException("moonmock serve exited before serving: " + command);
        }
        String token = null;
        int t = args.indexOf("--admin-token");
        if (t >= 0 && t + 1 < args.size()) token = args.get(t + 1);
        Moonmock mm = new Moonmock(URI.create(found), token, process);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            try { mm.health(); return mm; } catch (RuntimeException e) {
                if (System.nanoTime() > deadline) { mm.close(); throw e; }
                try { Thread.sleep(20); } catch (InterruptedException x) { Thread.currentThread().interrupt(); mm.close(); throw e; }
            }
        }
    }

    /** The binary: {@code binary}, else {@code $MOONMOCK_BIN}, else {@code moonmock} on {@code PATH}. */
    public static Path findBinary(Path binary) {
        for (String candidate : new String[] { binary == null ? null : binary.toString(), System.getenv("MOONMOCK_BIN") }) {
            if (candidate == null || candidate.isEmpty()) continue;
            Path path = Path.of(candidate).toAbsolutePath();
            if (Files.isRegularFile(path) && Files.isExecutable(path)) return path;
            throw new IllegalStateException("moonmock: " + path + " is not an executable file");
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (dir.isEmpty()) continue;
            Path path = Path.of(dir, "moonmock");
            if (Files.isRegularFile(path) && Files.isExecutable(path)) return path;
        }
        throw new IllegalStateException("moonmock: no moonmock binary; set MOONMOCK_BIN=/path/to/moonmock, put it on PATH, or pass it");
    }

    /** The server's base URL ({@code http://127.0.0.1:PORT}). */
    public URI url() { return url; }

    /** Stops a server this client started (SIGTERM, then a kill after 10 s); nothing for one it connected to. */
    @Override
    public void close() {
        if (process == null || !process.isAlive()) return;
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) { process.destroyForcibly(); process.waitFor(5, TimeUnit.SECONDS); }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Whether a server this client started is still running. */
    public boolean running() { return process != null && process.isAlive(); }

    /** The process of a server this client started ({@code null} for one it connected to). */
    public Process process() { return process; }

    // rules

    /** Answers {@code method path} (a pattern: {@code /users/:id}; {@code null}: any method) ahead of the script's rules; its id. */
    public String stub(String method, String path, Stub stub) {
        Map<String, Object> rule = new LinkedHashMap<>();
        if (method != null) rule.put("method", method);
        rule.put("path", path);
        rule.putAll(stub.match);
        rule.put("respond", stub.respond);
        return addRule(Json.write(rule));
    }

    /** Adds a rule given as the server's rule JSON; its id (the first id for an array of rules). */
    public String addRule(String json) {
        Object answer = call("POST", "/__moonmock/rules", json);
        Map<?, ?> map = (Map<?, ?>) answer;
        if (map.get("ids") instanceof List<?> ids) return ids.isEmpty() ? null : String.valueOf(ids.get(0));
        return String.valueOf(map.get("id"));
    }

    /** Every rule in evaluation order (runtime rules first). */
    @SuppressWarnings("unchecked")
    public List<Map<String, Object>> rules() { return (List<Map<String, Object>>) call("GET", "/__moonmock/rules", null); }

    public void removeRule(String id) { call("DELETE", "/__moonmock/rules/" + encode(id), null); }

    // journal and verification

    /** The journal, oldest first. */
    public List<Map<String, Object>> requests() { return requests(-1); }

    /** The entries recorded after entry {@code since}. */
    @SuppressWarnings("unchecked")
    public List<Map<String, Object>> requests(long since) {
        return (List<Map<String, Object>>) call("GET", "/__moonmock/requests" + (since >= 0 ? "?since=" + since : ""), null);
    }

    /** Asserts how many requests matched; the count. Throws {@link AssertionError} listing the closest requests and why. */
    public int verify(String method, String pattern, Times times) {
        Map<String, Object> query = new LinkedHashMap<>();
        if (method != null) query.put("method", method);
        query.put("pattern", pattern);
        query.put(times.key, times.count);
        return verified(query);
    }

    /** {@link #verify} of the requests a rule answered, by its id. */
    public int verifyRule(String rule, Times times) {
        Map<String, Object> query = new LinkedHashMap<>();
        query.put("rule", rule);
        query.put(times.key, times.count);
        return verified(query);
    }

    private int verified(Map<String, Object> query) {
        Answer a = request("POST", "/__moonmock/verify", Json.write(query));
        Map<?, ?> body = a.body instanceof Map<?, ?> m ? m : Map.of();
        if (a.status == 200) return ((Number) body.get("count")).intValue();
        if (a.status != 422) throw failure(a);
        Object said = body.get("message");
        StringBuilder message = new StringBuilder(said == null ? "verification failed" : String.valueOf(said));
        if (body.get("near_misses") instanceof List<?> misses) {
            for (Object o : misses) {
                Map<?, ?> miss = (Map<?, ?>) o;
                message.append("\n  closest: ").append(miss.get("request")).append(": ");
                message.append(miss.get("reasons") instanceof List<?> r ? String.join("; ", r.stream().map(String::valueOf).toList()) : "");
            }
        }
        throw new AssertionError(message.toString());
    }

    /** What the specs ({@code --spec}, {@code mock.spec}) say of the requests so far: per operation, {@code uncovered}, {@code violations}. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> contract() { return (Map<String, Object>) call("GET", "/__moonmock/contract", null); }

    /** Throws {@link AssertionError} listing each violation when a request or an answer broke a spec. */
    public void assertContractClean() {
        Answer a = request("POST", "/__moonmock/verify", "{\"contract\":\"clean\"}");
        if (a.status == 200) return;
        if (a.status != 422) throw failure(a);
        Map<?, ?> body = a.body instanceof Map<?, ?> m ? m : Map.of();
        Object said = body.get("message");
        StringBuilder message = new StringBuilder(said == null ? "the contract was broken" : String.valueOf(said));
        if (body.get("violations") instanceof List<?> list) {
            for (Object o : list.subList(0, Math.min(20, list.size()))) {
                Map<?, ?> v = (Map<?, ?>) o;
                if (!(v.get("errors") instanceof List<?> errors)) continue;
                for (Object e : errors) {
                    Map<?, ?> error = (Map<?, ?>) e;
                    Object at = error.get("instance_path");
                    message.append("\n  #").append(v.get("request_id")).append(' ').append(v.get("operation")).append(' ')
                           .append(v.get("direction")).append(": ")
                           .append(at == null || String.valueOf(at).isEmpty() ? "" : at + ": ").append(error.get("message"));
                }
            }
        }
        throw new AssertionError(message.toString());
    }

    // chaos and resources

    /** Switches on a profile the script named ({@code mock.chaos_profile}) from the next request, until {@link #stopChaos()}. */
    public Map<String, Object> chaos(String profile) { return chaos(profile, null); }

    /** As {@link #chaos(String)}, ending after {@code durationMs} milliseconds ({@code null}: until stopped). */
    public Map<String, Object> chaos(String profile, Long durationMs) {
        Map<String, Object> body = new java.util.LinkedHashMap<>();
        body.put("profile", profile);
        if (durationMs != null) body.put("duration_ms", durationMs);
        return chaosCall(body);
    }

    /** Switches on chaos settings ({@code error_rate}, {@code status}, {@code latency}, {@code fault}, {@code rate_limit}, {@code path}, ...). */
    public Map<String, Object> chaos(Map<String, ?> settings, Long durationMs) {
        Map<String, Object> body = new java.util.LinkedHashMap<>(settings);
        if (durationMs != null) body.put("duration_ms", durationMs);
        return chaosCall(body);
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> chaosCall(Map<String, Object> body) { return (Map<String, Object>) call("PUT", "/__moonmock/chaos", Json.write(body)); }

    /** Ends runtime chaos and pauses the script's own until chaos is switched on again. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> stopChaos() { return (Map<String, Object>) call("DELETE", "/__moonmock/chaos", null); }

    /** Each {@code mock.resource} collection: {@code path}, {@code count}, {@code items}. */
    @SuppressWarnings("unchecked")
    public List<Map<String, Object>> resources() {
        return (List<Map<String, Object>>) ((Map<?, ?>) call("GET", "/__moonmock/resources", null)).get("resources");
    }

    /** Brings a collection ({@code "/pets"}) back to its seed: its items forgotten, seeded again. */
    public void resetResource(String path) { call("DELETE", "/__moonmock/resources/" + encode(path.replaceFirst("^/+", "")), null); }

    // state, variants, lifecycle

    /** {@code mock.state}. */
    public State state() { return state; }

    /** Makes {@code variant} the active one of {@code rule} ({@code null}: no stub endpoint active). */
    public void switchVariant(String rule, String variant) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("active", variant);
        call("PUT", "/__moonmock/variants/" + encode(rule), Json.write(body));
    }

    /** Runtime rules, journal and state cleared; variants back to their defaults. */
    public void reset() { call("POST", "/__moonmock/reset", "null"); }

    /** Reloads the script; a {@link MoonmockException} with the script's error when it does not load. */
    public String reload() { return String.valueOf(((Map<?, ?>) call("POST", "/__moonmock/reload", "null")).get("message")); }

    @SuppressWarnings("unchecked")
    public Map<String, Object> health() { return (Map<String, Object>) call("GET", "/__moonmock/health", null); }

    /** {@code mock.state} of the server. */
    public final class State {
        /** The value of {@code key} ({@code String}, {@code Long}, {@code Double}, {@code Boolean}), or {@code null}. */
        public Object get(String key) {
            Answer a = request("GET", "/__moonmock/state/" + encode(key), null);
            if (a.status == 404) return null;
            if (a.status >= 400) throw failure(a);
            return a.body;
        }
        public void put(String key, Object value) { call("PUT", "/__moonmock/state/" + encode(key), Json.write(value)); }
        /** Removes {@code key}; whether it was there. */
        public boolean remove(String key) {
            return Boolean.TRUE.equals(((Map<?, ?>) call("DELETE", "/__moonmock/state/" + encode(key), null)).get("deleted"));
        }
        /** Replaces the whole store. */
        public void replace(Map<String, ?> values) { call("PUT", "/__moonmock/state", Json.write(values)); }
        @SuppressWarnings("unchecked")
        public Map<String, Object> all() { return (Map<String, Object>) call("GET", "/__moonmock/state", null); }
    }

    // transport

    private record Answer(int status, Object body) {}

    private Object call(String method, String path, String body) {
        Answer a = request(method, path, body);
        if (a.status >= 400) throw failure(a);
        return a.body;
    }

    private MoonmockException failure(Answer a) {
        Map<?, ?> map = a.body instanceof Map<?, ?> m ? m : Map.of();
        Object message = map.containsKey("error") ? map.get("error") : map.containsKey("message") ? map.get("message") : a.body;
        if (map.get("field") instanceof String field) return new RuleException(a.status, String.valueOf(message), field, a.body);
        return new MoonmockException(a.status, String.valueOf(message), a.body);
    }

    private Answer request(String method, String path, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url + path)).timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json")
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (token != null) b.header("Authorization", "Bearer " + token);
        try {
            HttpResponse<String> response = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            String text = response.body();
            Object decoded = null;
            if (text != null && !text.isEmpty()) {
                try { decoded = Json.parse(text); } catch (IllegalArgumentException e) { decoded = text; }
            }
            return new Answer(response.statusCode(), decoded);
        } catch (IOException e) {
            throw new MoonmockException(0, "moonmock: " + url + " did not answer: " + e.getMessage(), null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MoonmockException(0, "moonmock: interrupted", null);
        }
    }

    private static String encode(String s) { return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20"); }

    @Override public String toString() { return "Moonmock(" + url + ")"; }
}
