// The Moonmock JVM client for Gradle builds (Android unit tests, Kotlin): no runtime
// dependencies beyond the JDK; JUnit 5's API for MoonmockExtension, JUnit 4 for MoonmockRule.
plugins {
    `java-library`
}

group = "dev.moonmock"
version = "0.3.0"

java {
    toolchain { languageVersion.set(JavaLanguageVersion.of(17)) }
}

repositories { mavenCentral() }

dependencies {
    compileOnly("org.junit.jupiter:junit-jupiter-api:5.9.2")
    compileOnly("junit:junit:4.13.2")
    testImplementation("org.junit.jupiter:junit-jupiter:5.9.2")
    testImplementation("junit:junit:4.13.2")
    testRuntimeOnly("org.junit.vintage:junit-vintage-engine:5.9.2")
}

tasks.test {
    useJUnitPlatform()
    // The moonmock binary: MOONMOCK_BIN, else `moonmock` on PATH.
    environment("MOONMOCK_BIN", System.getenv("MOONMOCK_BIN") ?: "")
}
