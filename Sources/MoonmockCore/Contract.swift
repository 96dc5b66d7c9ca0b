/// One operation of an API's spec: what `GET /__moonmock/contract` counts requests by.
public struct ContractOperation: Sendable, Hashable {
    /// The `operationId`, or `METHOD /path` for an operation without one.
    public let id: String
    public let method: String
    /// The path template as the spec writes it (`/pets/{petId}`), after the server's base path.
    public let path: String

    public init(id: String, method: String, path: String) {
        self.id = id
        self.method = method
        self.path = path
    }
}

/// What a spec says of one request and its answer: the operation it is, and the violations
/// (`{instance_path, schema_path, message}` objects) of each direction.
///
/// ```swift
/// var verdict = checker.checkRequest(request)!
/// verdict.request.isEmpty   // the request is what the spec allows
/// ```
public struct ContractVerdict: Sendable {
    public var operation: ContractOperation?
    public var request: [JSONValue]
    public var response: [JSONValue]
    /// Refuse a request that breaks the contract, and an answer that does (`--spec-mode enforce`).
    public var enforces: Bool
    /// The status refusing the request gets: 400 (it breaks the operation), 404 (no path of the
    /// spec), 405 (a path of the spec, not this method; ``allow`` lists those it has).
    public var refusal: Int
    public var allow: [String]

    public init(operation: ContractOperation?, request: [JSONValue] = [], response: [JSONValue] = [], enforces: Bool,
                refusal: Int = 400, allow: [String] = []) {
        self.operation = operation
        self.request = request
        self.response = response
        self.enforces = enforces
        self.refusal = refusal
        self.allow = allow
    }

    public var isClean: Bool { request.isEmpty && response.isEmpty }

    /// The journal's `"contract"` member.
    public var json: JSONValue {
        .object(["operation": operation.map { .string($0.id) } ?? .null, "request": .array(request), "response": .array(response)])
    }

    /// A violation: where (`/query/limit`, `/body/name`), which part of the spec, and why.
    public static func violation(_ instancePath: String, _ schemaPath: String, _ message: String) -> JSONValue {
        .object(["instance_path": .string(instancePath), "schema_path": .string(schemaPath), "message": .string(message)])
    }
}

/// An API spec the engine checks requests and answers against (`moonmock serve --spec`,
/// `mock.spec`); `MoonmockContract`'s `OpenAPIContract` is the one there is.
public protocol ContractChecking: AnyObject, Sendable {
    /// Every operation, for the summary's `uncovered` list.
    var operations: [ContractOperation] { get }
    /// The request's operation and what about the request breaks it. A verdict without an
    /// operation: no operation of the spec is this request; `nil`: not the spec's business
    /// (the admin API's paths).
    func checkRequest(_ request: MockRequest) -> ContractVerdict?
    /// Adds what about `response` breaks the operation of `verdict`.
    func checkResponse(_ response: MockResponse, to request: MockRequest, _ verdict: inout ContractVerdict)
}
