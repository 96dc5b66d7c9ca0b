/// A server that could not start.
///
/// ```swift
/// do { try server.start() } catch { print(error) }   // cannot listen on 127.0.0.1:8080 (address in use?)
/// ```
public struct ServerError: Error, CustomStringConvertible, Sendable {
    private enum Kind: Sendable {
        case listen
        case configuration
    }

    private let kind: Kind
    public let description: String

    private init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    static func listen(_ text: String) -> ServerError { ServerError(.listen, text) }
    static func configuration(_ text: String) -> ServerError { ServerError(.configuration, text) }

    /// `true` when the address could not be bound.
    public var isListenError: Bool { kind == .listen }
}
