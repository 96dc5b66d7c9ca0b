package dev.moonmock;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The script {@link MoonmockExtension} serves for a test class (a path, relative to the working
 * directory), and more {@code moonmock serve} arguments.
 *
 * <pre>{@code
 * @ExtendWith(MoonmockExtension.class)
 * @MoonmockScript("mocks.lua")
 * class ProfileTest { @Test void notFound(Moonmock mm) { ... } }
 * }</pre>
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface MoonmockScript {
    String value();
    String[] args() default {};
}
