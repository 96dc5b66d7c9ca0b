package dev.moonmock;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5: one server per test class for the script its {@link MoonmockScript} names, reset
 * before each test, stopped after the class; a test (or constructor, or lifecycle method) that
 * takes a {@link Moonmock} parameter gets it.
 *
 * <pre>{@code
 * @ExtendWith(MoonmockExtension.class)
 * @MoonmockScript("mocks.lua")
 * class ProfileTest {
 *     @Test void notFound(Moonmock mm) {
 *         mm.stub("GET", "/users/7", Stub.status(404).json("{\"error\":\"gone\"}"));
 *     }
 * }
 * }</pre>
 */
public final class MoonmockExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(MoonmockExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        Class<?> type = context.getRequiredTestClass();
        MoonmockScript script = type.getAnnotation(MoonmockScript.class);
        if (script == null) {
            throw new IllegalStateException("moonmock: " + type.getName() + " uses MoonmockExtension without @MoonmockScript(\"mocks.lua\")");
        }
        context.getStore(NAMESPACE).put(type, Moonmock.serve(Path.of(script.value()), List.of(script.args())));
    }

    @Override
    public void afterAll(ExtensionContext context) {
        Moonmock mm = context.getStore(NAMESPACE).remove(context.getRequiredTestClass(), Moonmock.class);
        if (mm != null) mm.close();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        Moonmock mm = server(context);
        if (mm != null) mm.reset();
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == Moonmock.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Moonmock mm = server(context);
        if (mm == null) throw new ParameterResolutionException("moonmock: no server for " + context.getDisplayName());
        return mm;
    }

    private static Moonmock server(ExtensionContext context) {
        for (ExtensionContext c = context; c != null; c = c.getParent().orElse(null)) {
            if (c.getTestClass().isPresent()) {
                Moonmock mm = c.getStore(NAMESPACE).get(c.getRequiredTestClass(), Moonmock.class);
                if (mm != null) return mm;
            }
        }
        return null;
    }
}
