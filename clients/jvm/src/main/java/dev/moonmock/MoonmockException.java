package dev.moonmock;

/** The server refused a call: {@link #status()} is the HTTP status, the message the server's words. */
public class MoonmockException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int status;
    private final transient Object body;

    public MoonmockException(int status, String message, Object body) {
        super(message);
        this.status = status;
        this.body = body;
    }

    public int status() { return status; }

    /** The server's answer, decoded ({@code Map} for a JSON object). */
    public Object body() { return body; }
}
