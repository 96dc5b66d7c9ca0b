/// The release this build is (`moonmock version`, the MCP server's `serverInfo`, the types cache).
public enum MoonmockVersion {
    public static let current = "0.1.0"
}
