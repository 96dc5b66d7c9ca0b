package dev.moonmock;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON codec (RFC 8259), so that the client needs nothing beyond the JDK: objects are
 * {@code Map<String, Object>} (keys in order), arrays {@code List<Object>}, numbers {@code Long}
 * when integral else {@code Double}, and {@code String}, {@code Boolean}, {@code null}.
 *
 * <pre>{@code
 * Object value = Json.parse("{\"id\": 7}");   // {id=7}
 * String text = Json.write(Map.of("id", 7));   // {"id":7}
 * }</pre>
 */
public final class Json {
    private Json() {}

    /** The value of a JSON text; {@link IllegalArgumentException} naming the offset when it is not JSON. */
    public static Object parse(String text) {
        Parser p = new Parser(text);
        p.space();
        Object value = p.value(0);
        p.space();
        if (p.at != text.length()) throw p.error("text after the value");
        return value;
    }

    /** The JSON text of a value made of maps, lists, strings, numbers, booleans and nulls. */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        if (value == null) out.append("null");
        else if (value instanceof String s) string(s, out);
        else if (value instanceof Boolean b) out.append(b);
        else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (!Double.isFinite(d)) throw new IllegalArgumentException("JSON has no " + d);
            out.append(d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d));
        } else if (value instanceof Number n) out.append(n.toString());
        else if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!first) out.append(',');
                first = false;
                string(String.valueOf(e.getKey()), out);
                out.append(':');
                write(e.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof Iterable<?> list) {
            out.append('[');
            boolean first = true;
            for (Object item : list) {
                if (!first) out.append(',');
                first = false;
                write(item, out);
            }
            out.append(']');
        } else if (value instanceof Object[] array) write(List.of(array), out);
        else throw new IllegalArgumentException("not a JSON value: " + value.getClass().getName());
    }

    private static void string(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
                }
            }
        }
        out.append('"');
    }

    private static final class Parser {
        final String s;
        int at;

        Parser(String s) { this.s = s; }

        IllegalArgumentException error(String why) {
            return new IllegalArgumentException("invalid JSON at offset " + at + ": " + why);
        }

        void space() {
            while (at < s.length() && " \t\r\n".indexOf(s.charAt(at)) >= 0) at++;
        }

        Object value(int depth) {
            if (depth > 512) throw error("nested too deep");
            if (at >= s.length()) throw error("unexpected end");
            char c = s.charAt(at);
            switch (c) {
                case '{': return object(depth);
                case '[': return array(depth);
                case '"': return string();
                case 't': return literal("true", Boolean.TRUE);
                case 'f': return literal("false", Boolean.FALSE);
                case 'n': return literal("null", null);
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) return number();
                    throw error("unexpected '" + c + "'");
            }
        }

        Object literal(String word, Object value) {
            if (!s.startsWith(word, at)) throw error("expected " + word);
            at += word.length();
            return value;
        }

        Map<String, Object> object(int depth) {
            Map<String, Object> map = new LinkedHashMap<>();
            at++;
            space();
            if (at < s.length() && s.charAt(at) == '}') { at++; return map; }
            while (true) {
                space();
                if (at >= s.length() || s.charAt(at) != '"') throw error("expected a key");
                String key = string();
                space();
                if (at >= s.length() || s.charAt(at) != ':') throw error("expected ':'");
                at++;
                space();
                map.put(key, value(depth + 1));
                space();
                if (at >= s.length()) throw error("unexpected end");
                char c = s.charAt(at++);
                if (c == '}') return map;
                if (c != ',') throw error("expected ',' or '}'");
            }
        }

        List<Object> array(int depth) {
            List<Object> list = new ArrayList<>();
            at++;
            space();
            if (at < s.length() && s.charAt(at) == ']') { at++; return list; }
            while (true) {
                space();
                list.add(value(depth + 1));
                space();
                if (at >= s.length()) throw error("unexpected end");
                char c = s.charAt(at++);
                if (c == ']') return list;
                if (c != ',') throw error("expected ',' or ']'");
            }
        }

        String string() {
            StringBuilder out = new StringBuilder();
            at++;
            while (true) {
                if (at >= s.length()) throw error("unterminated string");
                char c = s.charAt(at++);
                if (c == '"') return out.toString();
                if (c < 0x20) throw error("control character in a string");
                if (c != '\\') { out.append(c); continue; }
                if (at >= s.length()) throw error("unterminated escape");
                char e = s.charAt(at++);
                switch (e) {
                    case '"', '\\', '/' -> out.append(e);
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'u' -> {
                        if (at + 4 > s.length()) throw error("short \\u escape");
                        try { out.append((char) Integer.parseInt(s.substring(at, at + 4), 16)); }
                        catch (NumberFormatException x) { throw error("bad \\u escape"); }
                        at += 4;
                    }
                    default -> throw error("unknown escape \\" + e);
                }
            }
        }

        Object number() {
            int start = at;
            if (s.charAt(at) == '-') at++;
            if (at >= s.length()) throw error("a number ends early");
            if (s.charAt(at) == '0') at++;
            else if (s.charAt(at) >= '1' && s.charAt(at) <= '9') { while (at < s.length() && Character.isDigit(s.charAt(at))) at++; }
            else throw error("expected a digit");
            boolean integral = true;
            if (at < s.length() && s.charAt(at) == '.') {
                integral = false;
                at++;
                int digits = at;
                while (at < s.length() && Character.isDigit(s.charAt(at))) at++;
                if (at == digits) throw error("expected a digit after '.'");
            }
            if (at < s.length() && (s.charAt(at) == 'e' || s.charAt(at) == 'E')) {
                integral = false;
                at++;
                if (at < s.length() && (s.charAt(at) == '+' || s.charAt(at) == '-')) at++;
                int digits = at;
                while (at < s.length() && Character.isDigit(s.charAt(at))) at++;
                if (at == digits) throw error("expected a digit in the exponent");
            }
            String text = s.substring(start, at);
            if (integral) {
                try { return Long.parseLong(text); } catch (NumberFormatException x) { /* beyond 64 bits */ }
            }
            return Double.parseDouble(text);
        }
    }
}
