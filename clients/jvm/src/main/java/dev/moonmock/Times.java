package dev.moonmock;

/** How many requests {@link Moonmock#verify} expects: {@code Times.exactly(1)}, {@code atLeast}, {@code atMost}. */
public final class Times {
    final String key;
    final int count;

    private Times(String key, int count) {
        if (count < 0) throw new IllegalArgumentException("a count is not negative: " + count);
        this.key = key;
        this.count = count;
    }

    public static Times exactly(int n) { return new Times("times", n); }
    public static Times atLeast(int n) { return new Times("at_least", n); }
    public static Times atMost(int n) { return new Times("at_most", n); }
    public static Times once() { return exactly(1); }
    public static Times never() { return exactly(0); }

    @Override public String toString() { return key + " " + count; }
}
