extension LuaTypes {
    /// The annotations of `mock.proto`, `mock.grpc` and `mock.grpc_error`, in ``source`` after ``waitingSource``.
    static let grpcSource = #"""
---Loads protobuf schemas: .proto files (compiled with protoc) or descriptor sets (.binpb, .pb).
---@param files string|string[]
---@param opts? {include?: string|string[]}  protoc's import folders (the script's folder is one)
function mock.proto(files, opts) end

---@class mock.GrpcRequest: mock.Request
---@field message table              the (first) request message, in the proto3 JSON mapping
---@field messages table[]           every request message (client and bidi streaming)
---@field metadata table<string, string>  the call's metadata (its header fields)

---@class mock.GrpcCall: mock.GrpcRequest
local GrpcCall = {}
---Sends a message on a bidirectional stream.
---@param message table
function GrpcCall:send(message) end

---@class mock.GrpcBidi
---@field on_message fun(call: mock.GrpcCall, msg: table): mock.GrpcError|nil

---@class mock.GrpcOptions
---@field match? table               a subset the request message must contain
---@field headers? table<string, string>  leading metadata
---@field trailers? table<string, string>  trailing metadata
---@field times? integer
---@field delay? mock.Delay
---@field name? string
---@field priority? integer

---A gRPC method ("pkg.Service/Method") answered over gRPC, gRPC-Web and Connect: a table (the
---message), mock.stream{...} of messages (server streaming), or mock.grpc_error(...).
---@param method string
---@param handler table|mock.GrpcBidi|fun(req: mock.GrpcRequest): table|mock.Response|mock.GrpcError
---@param opts? mock.GrpcOptions
function mock.grpc(method, handler, opts) end

---@class mock.GrpcError
---@field code integer
---@field message string

---A status other than OK: the code as a number or its name ("NOT_FOUND"); details are messages
---with an "@type" (type.googleapis.com/NAME), sent in grpc-status-details-bin.
---@param code integer|string
---@param message? string
---@param details? table[]
---@return mock.GrpcError
function mock.grpc_error(code, message, details) end

"""#
}
