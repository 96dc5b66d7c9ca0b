import Foundation

/// The HTTP methods a mock answers (`.all`: any).
public enum RequestMethod: Sendable, Equatable {
    case all, get, post, put, patch, delete

    func matches(_ method: String) -> Bool {
        switch self {
        case .all: return true
        case .get: return method == "GET" || method == "HEAD"
        case .post: return method == "POST"
        case .put: return method == "PUT"
        case .patch: return method == "PATCH"
        case .delete: return method == "DELETE"
        }
    }
}

/// More conditions and behaviour for one mock: a delay (seconds) and a body condition.
///
/// ```swift
/// AdditionalRequestParameters(responseDelay: 0.5,
///                             bodyMatches: BodyMatchHelpers.jsonContainsObject { $0["operationName"] as? String == "GetUser" })
/// ```
public struct AdditionalRequestParameters: Sendable {
    /// Seconds before the mock answers.
    public let responseDelay: Float
    /// The mock answers only when this holds for the request body (`nil` when there is none).
    public let bodyMatches: (@Sendable (Data?) -> Bool)?

    public init(responseDelay: Float = 0, bodyMatches: (@Sendable (Data?) -> Bool)? = nil) {
        self.responseDelay = responseDelay
        self.bodyMatches = bodyMatches
    }
}

/// Ready-made body conditions.
public enum BodyMatchHelpers {
    /// The body is a JSON object satisfying `predicate`, or an array of objects one of which does
    /// (a GraphQL batch).
    ///
    /// ```swift
    /// BodyMatchHelpers.jsonContainsObject { $0["operationName"] as? String == "GetUser" }
    /// ```
    public static func jsonContainsObject(where predicate: @escaping @Sendable ([String: Any]) -> Bool) -> @Sendable (Data?) -> Bool {
        { body in
            guard let body, let json = try? JSONSerialization.jsonObject(with: body) else { return false }
            if let object = json as? [String: Any] { return predicate(object) }
            if let array = json as? [[String: Any]] { return array.contains(where: predicate) }
            return false
        }
    }
}

/// How much of each request is logged.
public enum RequestLogMode: Sendable, Equatable {
    /// Nothing (the default).
    case none
    /// Method, URL and body.
    case compact
    /// Method, URL, headers and body.
    case verbose
}

/// One logged request.
public struct RequestLogInfo: Sendable {
    public let method: String
    public let url: String
    /// The header fields, in ``RequestLogMode/verbose`` mode only (`nil` in compact mode).
    public let headers: [String: String]?
    /// The body, if the request has one.
    public let body: Data?
}
