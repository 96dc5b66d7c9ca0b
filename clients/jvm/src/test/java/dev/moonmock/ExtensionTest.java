package dev.moonmock;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/** The JUnit 5 extension: one server for the class, a Moonmock parameter, reset before each test. */
@ExtendWith(MoonmockExtension.class)
@MoonmockScript("src/test/resources/mocks.lua")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ExtensionTest {
    @Test
    @Order(1)
    void aStubForThisTest(Moonmock mm) throws Exception {
        mm.stub("GET", "/only-here", Stub.ok().text("1"));
        assertEquals("1", MoonmockTest.get(mm, "/only-here").body());
    }

    @Test
    @Order(2)
    void resetBeforeEachTest(Moonmock mm) throws Exception {
        assertEquals(404, MoonmockTest.get(mm, "/only-here").statusCode());
        assertEquals(1, mm.verify("GET", "/only-here", Times.once()));
    }
}
