package dev.moonmock;

/** A rule the server did not take: {@link #field()} names the part at fault ({@code rule.respond.status}). */
public class RuleException extends MoonmockException {
    private static final long serialVersionUID = 1L;
    private final String field;

    public RuleException(int status, String message, String field, Object body) {
        super(status, message, body);
        this.field = field;
    }

    public String field() { return field; }
}
